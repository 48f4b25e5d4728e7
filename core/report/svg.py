"""The fullness timeline as a static SVG: tokens per request for each side.

Drawn once in Python, so the report needs no script or library to show it, from the one
timeline the workbench draws too (:mod:`core.views.timeline`): one polyline per side (one
point per request), the cache reads shaded under it, a dashed line where each side
compacts, and a mark at each request a compaction came before. Every label is escaped: a
model name comes from the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from core.views.timeline import Series, Timeline

COLOURS: dict[str, str] = {"ctxlab": "#2b7bb9", "original": "#d9822b", "watched": "#3a9d5d"}
WIDTH, HEIGHT = 960, 280
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 24, 36


TRIGGER_NAMES = {"ctxlab": "ctxlab's trigger", "original": "the agent's auto-compact",
                 "watched": "the client's auto-compact"}


@dataclass(frozen=True)
class Frame:
    """The plot area every report SVG shares: ``count`` points across, 0 to ``y_max`` tokens
    up, the axes and ticks, and flat labelled lines (a trigger, the model's window)."""

    count: int
    y_max: int

    @property
    def floor(self) -> float:
        return HEIGHT - BOTTOM

    def x(self, i: int) -> float:
        span = WIDTH - LEFT - RIGHT
        return LEFT + (span * i / (self.count - 1) if self.count > 1 else span / 2)

    def y(self, tokens: int) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - tokens / self.y_max)

    def open(self, css_class: str, label: str, first: int, last: int) -> list[str]:
        """The ``<svg>`` tag, the axes and the ticks (close it with ``</svg>``)."""
        floor = self.floor
        return [f'<svg class="{css_class}" xmlns="http://www.w3.org/2000/svg" '
                f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(label)}">',
                f'<line class="axis" x1="{LEFT}" y1="{floor}" x2="{WIDTH - RIGHT}" '
                f'y2="{floor}"/>',
                f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{floor}"/>',
                f'<text class="tick" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">'
                f'{self.y_max:,}</text>',
                f'<text class="tick" x="{LEFT - 6}" y="{floor}" text-anchor="end">0</text>',
                f'<text class="tick" x="{LEFT}" y="{HEIGHT - 8}">request {first}</text>',
                f'<text class="tick" x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">'
                f'request {last}</text>']

    def flat(self, label: str, tokens: int) -> list[str]:
        """A dashed line across at ``tokens``, named at its right end."""
        at = self.y(tokens)
        return [f'<line class="threshold" x1="{LEFT}" y1="{at:.1f}" x2="{WIDTH - RIGHT}" '
                f'y2="{at:.1f}"><title>{escape(label)}: {tokens:,} tokens</title></line>',
                f'<text class="threshold-label" x="{WIDTH - RIGHT - 4}" y="{at - 4:.1f}" '
                f'text-anchor="end">{escape(label)} {tokens:,}</text>']


def y_scale(values: list[int]) -> int:
    """The top of the y axis: a little above the highest value, so the peak is not cut."""
    top = max([1, *values])
    return int(top * 1.08) + 1


def timeline_svg(timeline: Timeline, lines: Sequence[tuple[str, int]] = ()) -> str:
    """``timeline`` (:func:`core.views.timeline.build`: each side's requests and where it
    compacts), with ``lines`` (label, tokens) drawn besides, such as the model's window."""
    count = max((len(series.x) for series in timeline.series), default=0)
    if count == 0:
        return '<p class="empty">No model request: nothing to draw.</p>'
    longest = max(timeline.series, key=lambda s: len(s.x))
    thresholds = [(TRIGGER_NAMES[s.side], s.threshold) for s in timeline.series
                  if s.threshold is not None] + list(lines)
    frame = Frame(count, y_scale([timeline.top] + [tokens for _, tokens in thresholds]))
    # the requests' own numbers (a watch's ids)
    parts = frame.open("timeline", "context tokens per request", longest.x[0], longest.x[-1])
    for label, tokens in thresholds:
        parts += frame.flat(label, tokens)
    for series in timeline.series:
        parts += _side(series, frame.x, frame.y, frame.floor)
    parts.append("</svg>")
    return "".join(parts)


def _side(series: Series, x: Callable[[int], float], y: Callable[[int], float],
          floor: float) -> list[str]:
    side = series.side
    colour = COLOURS.get(side, "#555")
    parts: list[str] = []
    last = len(series.x) - 1
    if series.has_cache:
        shade = [f"{x(i):.1f},{y(read or 0):.1f}" for i, read in enumerate(series.cache_read)]
        edge = f"{x(last):.1f},{floor:.1f} {x(0):.1f},{floor:.1f}"
        parts.append(f'<polygon class="cache" data-side="{side}" fill="{colour}" '
                     f'points="{" ".join(shade)} {edge}"><title>{side}: cache reads'
                     f'</title></polygon>')
    marked: dict[int, list[str]] = {}
    for mark in series.marks:
        marked.setdefault(mark.index, []).append(mark.stage)
    for index, names in marked.items():
        at = series.at(index)
        if at is None:
            continue
        named = ", ".join(dict.fromkeys(names))
        parts.append(f'<line class="mark" data-side="{side}" stroke="{colour}" '
                     f'x1="{x(at):.1f}" y1="{TOP}" x2="{x(at):.1f}" y2="{floor:.1f}">'
                     f'<title>{side} request {index}: {escape(named)}</title></line>')
    line = " ".join(f"{x(i):.1f},{y(tokens):.1f}" for i, tokens in enumerate(series.y))
    parts.append(f'<polyline class="series" data-side="{side}" data-requests="{last + 1}" '
                 f'stroke="{colour}" points="{line}"><title>{side}: tokens per request'
                 f'</title></polyline>')
    return parts
