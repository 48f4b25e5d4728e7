"""The fullness timeline as a static SVG: tokens per request for each side.

Drawn once in Python, so the report needs no script or library to show it: one polyline per
side (one point per request, at the tokens the API counted where an answer said, else the
estimate), the cache reads shaded under it, a dashed line per threshold, and a mark at each
request a compaction came before. Every label is escaped: a model name comes from the file.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from core.views.requests import RequestPoint, Side

COLOURS: dict[str, str] = {"ctxlab": "#2b7bb9", "original": "#d9822b", "watched": "#3a9d5d"}
WIDTH, HEIGHT = 960, 280
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 24, 36


def _scale(values: list[int]) -> int:
    top = max([1, *values])
    return int(top * 1.08) + 1


def timeline_svg(series: dict[Side, list[RequestPoint]],
                 thresholds: list[tuple[str, int]]) -> str:
    """The timeline of ``series`` (each side's requests) against ``thresholds`` (tokens)."""
    count = max((len(points) for points in series.values()), default=0)
    if count == 0:
        return '<p class="empty">No model request: nothing to draw.</p>'
    tallest = [p.context_tokens for points in series.values() for p in points]
    y_max = _scale(tallest + [tokens for _, tokens in thresholds])
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (span_x * i / (count - 1) if count > 1 else span_x / 2)

    def y(tokens: int) -> float:
        return TOP + span_y * (1 - tokens / y_max)

    parts = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="context tokens per request">',
             f'<line class="axis" x1="{LEFT}" y1="{TOP + span_y}" x2="{WIDTH - RIGHT}" '
             f'y2="{TOP + span_y}"/>',
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + span_y}"/>',
             f'<text class="tick" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">'
             f'{y_max:,}</text>',
             f'<text class="tick" x="{LEFT - 6}" y="{TOP + span_y}" text-anchor="end">0</text>',
             f'<text class="tick" x="{LEFT}" y="{HEIGHT - 8}">request 1</text>',
             f'<text class="tick" x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">'
             f'request {count}</text>']
    for label, tokens in thresholds:
        at = y(tokens)
        parts.append(f'<line class="threshold" x1="{LEFT}" y1="{at:.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{at:.1f}"><title>{escape(label)}: {tokens:,} tokens</title></line>')
        parts.append(f'<text class="threshold-label" x="{WIDTH - RIGHT - 4}" y="{at - 4:.1f}" '
                     f'text-anchor="end">{escape(label)} {tokens:,}</text>')
    for side, points in series.items():
        parts += _side(side, points, x, y, TOP + span_y)
    parts.append("</svg>")
    return "".join(parts)


def _side(side: Side, points: list[RequestPoint], x: Callable[[int], float],
          y: Callable[[int], float], floor: float) -> list[str]:
    colour = COLOURS.get(side, "#555")
    parts: list[str] = []
    if any(p.cache_read for p in points):
        shade = [f"{x(i):.1f},{y(p.cache_read or 0):.1f}" for i, p in enumerate(points)]
        edge = f"{x(len(points) - 1):.1f},{floor:.1f} {x(0):.1f},{floor:.1f}"
        parts.append(f'<polygon class="cache" data-side="{side}" fill="{colour}" '
                     f'points="{" ".join(shade)} {edge}"><title>{side}: cache reads'
                     f'</title></polygon>')
    for i, point in enumerate(points):
        if point.stages:
            names = ", ".join(dict.fromkeys(s.stage for s in point.stages))
            parts.append(f'<line class="mark" data-side="{side}" stroke="{colour}" '
                         f'x1="{x(i):.1f}" y1="{TOP}" x2="{x(i):.1f}" y2="{floor:.1f}">'
                         f'<title>{side} request {point.index}: {escape(names)}</title></line>')
    line = " ".join(f"{x(i):.1f},{y(p.context_tokens):.1f}" for i, p in enumerate(points))
    parts.append(f'<polyline class="series" data-side="{side}" data-requests="{len(points)}" '
                 f'stroke="{colour}" points="{line}"><title>{side}: tokens per request'
                 f'</title></polyline>')
    return parts
