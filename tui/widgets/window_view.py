"""The "Window" tab: one request's context window in tokens, as a bar a projector shows.

It draws :func:`core.views.window.window_of` — the figures ``ctxlab context --json``
prints — and measures nothing. The model's window is a stacked bar, one colour and one
symbol per category (the symbol says it without colour: ``▓`` sent with every call, ``█``
messages, ``░`` free), with the compaction marks drawn under it (``▲`` where compaction
fires, ``△`` ctxlab's target; in the projector theme the Context meter's heavy marks, each
named with its number: :mod:`tui.widgets.meter_marks`). A bar rather than ``/context``'s
grid: a grid's cell is a fixed share of the window, so at 80 columns a category under 1%
vanishes and the marks fall between cells, while the bar's width follows the panel and a
mark lands within one cell.
Under the bar, the legend: category, tokens, % of the window, chars.

In a replay both sides are drawn, the recorded original above ctxlab's, each bar with its
legend (the panel scrolls when both do not fit). It follows the latest request; another
view that selects one calls :meth:`WindowView.show`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import set_cell_size
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from core import events as ev
from core.config import Thresholds
from core.views.requests import LaterLog, RequestLog, Side
from core.views.window import PER_CALL, Window, ordered, window_of
from tui.i18n import t
from tui.routing import Routed, RunInfo, draw_shown, handles
from tui.widgets.meter_marks import LIGHT, MarkStyle, mark_style, named_rows
from tui.widgets.redraw import shown, update_if_changed

BAR_ROWS = 2
LABEL_CELLS = 34  # the legend's label column at most…
MIN_LABEL = 12  # …and at least
SWATCH, TOKENS, PCT, CHARS = 3, 9, 7, 11  # the other columns' cells
STYLE = {
    "overhead": "slategray", "system": "mediumorchid", "tools": "plum",
    "memory": "darkcyan", "recalled": "cadetblue", "pinned": "steelblue",
    "text": "dodgerblue", "system_messages": "royalblue", "tool_calls": "orange",
    "tool_results": "goldenrod", "pointers": "yellowgreen", "summaries": "seagreen",
    "thinking": "hotpink", "images": "sienna", "structure": "gray", "unsplit": "dodgerblue",
}
FREE = ("░", "$panel-lighten-2")
MARK = {"trigger": ("▲", "bold $error"), "auto_compact": ("▲", "bold $error"),
        "target": ("△", "bold $warning")}
FOLDED = (ev.RunStart, ev.ReplayStart, ev.WatchStart, ev.Rewind, ev.ModelRequest,
          ev.ModelResponse, ev.ReplayStep, ev.Stage, ev.WatchRequest, ev.WatchResponse)


def symbol(category: str) -> str:
    return "▓" if category in PER_CALL else "█"


def bar_cells(window: Window, width: int) -> list[tuple[str, str]]:
    """One (symbol, style) per cell: the category whose tokens cover the cell's middle."""
    scale = max(window.window_tokens, window.tokens, 1)
    ends: list[tuple[int, str]] = []
    total = 0
    for part in window.parts:
        total += part.tokens
        ends.append((total, part.category))
    cells = []
    for i in range(width):
        middle = (i + 0.5) * scale / width
        category = next((c for end, c in ends if middle < end), None)
        cells.append(FREE if category is None else (symbol(category), STYLE[category]))
    return cells


def mark_glyph(kind: str, style: MarkStyle) -> tuple[str, str]:
    """A mark's glyph and colour: ``▲``/``△``, or the meter's heavy ones on a projector."""
    glyph, colour = MARK[kind]
    if style.labelled:
        glyph = style.target if kind == "target" else style.trigger
    return glyph, colour


def mark_line(window: Window, width: int, style: MarkStyle = LIGHT) -> list[Content]:
    """The marks under the bar, each at the cell its tokens fall in; in a projector's
    heavy style the Context meter's glyphs, and a row naming each mark with its number."""
    scale = max(window.window_tokens, window.tokens, 1)
    line = [" "] * width
    styles = [""] * width
    named: list[tuple[str, int, str]] = []
    for mark in sorted(window.marks, key=lambda m: m.kind != "target"):  # ▲ over △
        at = min(width - 1, int(mark.tokens * width / scale))
        glyph, colour = mark_glyph(mark.kind, style)
        line[at], styles[at] = glyph, colour
        named.append((t(f"marks.{mark.kind}", n=mark.tokens), at, colour))
    marks = Content.assemble(*[(c, s) for c, s in zip(line, styles, strict=True)])
    return [marks, *(named_rows(named, width) if style.labelled else [])]


@dataclass(frozen=True)
class Legend:
    """The legend's columns at a width: the label's cells, and whether the % column fits
    (it goes first when the tab is narrow: chars stay beside tokens, the course's budget)."""

    label: int
    pct: bool

    @classmethod
    def at(cls, width: int) -> Legend:
        room = width - SWATCH - TOKENS - CHARS
        pct = room - PCT >= MIN_LABEL
        return cls(max(MIN_LABEL, min(LABEL_CELLS, room - (PCT if pct else 0))), pct)

    def head(self) -> Content:
        return Content.styled(
            set_cell_size(" " * SWATCH + t("window.col.category"), SWATCH + self.label)
            + set_cell_size(t("window.col.tokens").rjust(TOKENS), TOKENS)
            + (set_cell_size(t("window.col.pct").rjust(PCT), PCT) if self.pct else "")
            + set_cell_size(t("window.col.chars").rjust(CHARS), CHARS), "dim")

    def row(self, swatch: tuple[str, str], label: str, tokens: int, window: int,
            chars: int | None) -> Content:
        pct = f"{tokens / window * 100:.1f}%" if window else "—"
        return Content.assemble((swatch[0] * 2, swatch[1]), " ",
                                set_cell_size(label, self.label),
                                (f"{tokens:>{TOKENS},}", "bold"),
                                f"{pct:>{PCT}}" if self.pct else "",
                                "—".rjust(CHARS) if chars is None else f"{chars:>{CHARS},}")


def draw(window: Window, width: int, style: MarkStyle = LIGHT) -> list[Content]:
    """Title, bar, marks and legend of one side, each line at most ``width`` cells."""
    size = window.window_tokens
    legend = Legend.at(width)
    count = t("window.counted" if window.counted else "window.estimated")
    title = Content.styled(t("window.title", side=t(f"window.side.{window.side}"),
                             index=window.index, model=window.model or "?"), "bold")
    scale = Content.styled(t("window.size", window=size,
                             source=t(f"window.source.{window.window_source}")), "dim")
    bar = Content.assemble(*bar_cells(window, width))
    lines = [title, scale, *([bar] * BAR_ROWS), *mark_line(window, width, style),
             legend.head()]
    lines += [legend.row((symbol(p.category), STYLE[p.category]), t(f"cat.{p.category}"),
                         p.tokens, size, p.chars) for p in window.parts]
    lines.append(legend.row(("Σ", "bold"), t("window.total", count=count), window.tokens,
                            size, window.chars))
    lines.append(legend.row(FREE, t("window.free"), window.free_tokens, size, None))
    if window.over_tokens:
        lines.append(legend.row(("!", "bold $error"), t("window.over"), window.over_tokens,
                                size, None))
    for mark in window.marks:
        lines.append(legend.row(mark_glyph(mark.kind, style), t(f"window.mark.{mark.kind}",
                                                   source=t(f"window.how.{mark.source}")),
                                mark.tokens, size, mark.chars))
    buffer = (t("window.buffer", n=window.buffer_tokens,
                source=t(f"window.how.{window.buffer_source}"))
              if window.buffer_tokens is not None else t("window.no_buffer"))
    lines.append(Content.styled(buffer + "  " + t("window.ratio", ratio=window.chars_per_token),
                                "dim italic"))
    return [line.truncate(width, ellipsis=True) for line in lines]


class WindowView(Routed, VerticalScroll, can_focus=True):
    """The window of the request shown, per side; the latest unless :meth:`show` chose.

    It draws only while it is shown, and folds the requests only to draw them (or when
    asked): a replay at full speed with the tab closed costs it an append per event."""

    DEFAULT_CSS = """
    WindowView { padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._requests = LaterLog()
        self.limits: Thresholds | None = None
        self.chosen: tuple[Side, int] | None = None  # None: follow the latest
        self._stale = False  # something changed while the tab was not shown

    @property
    def requests(self) -> RequestLog:
        return self._requests.log

    def compose(self) -> ComposeResult:
        yield Static(id="window-body")

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self.redraw(), init=False)  # the marks
        self.redraw()

    def on_resize(self, _: events.Resize) -> None:
        self.redraw()

    def watch_show_vertical_scrollbar(self) -> None:
        """The bars are cut to the width left beside the scrollbar, which comes and goes
        with the body's length, not with the view's size."""
        self.redraw()

    def reset(self, run: RunInfo) -> None:
        """A new run, or a source going back: no requests yet, but what the run is (its
        model, a replay's ratio and window) stays until the next ``run_start`` — a rewind
        does not say it again."""
        self._requests.add(ev.Rewind(position=0))
        self.limits = run.limits
        self.chosen = None
        self.redraw()

    def set_limits(self, limits: Thresholds) -> None:
        """ctxlab's thresholds changed while the run goes on (the limits screen)."""
        self.limits = limits
        self.redraw()

    @handles(*FOLDED)
    def fold(self, event: ev.Event) -> None:
        self.see(event)

    def see(self, event: ev.Event) -> None:
        """Fold one event (a screen that is not routed by the app feeds it this way); a
        stage redraws too, since a recorded agent's compaction moves the marks."""
        self._requests.add(event)
        self.redraw_once(self.redraw)

    def show(self, side: Side | None = None, index: int | None = None) -> None:
        """Show request ``index`` of ``side`` (its own numbering); ``None``: the latest."""
        self.chosen = None if side is None or index is None else (side, index)
        self.redraw()

    def windows(self) -> list[Window]:
        """The windows drawn: the chosen request's side (every side at that index in a
        replay, whose sides share their numbering), else each side's latest."""
        sides = ordered(self.requests.sides())
        if self.chosen is not None:
            side, index = self.chosen
            shared = sides if side != "watched" else [side]
            found = [window_of(self.requests, s, index, limits=self.limits) for s in shared]
        else:
            found = [window_of(self.requests, s, limits=self.limits) for s in sides]
        return [w for w in found if w is not None]

    def on_show(self) -> None:
        draw_shown(self, self._requests, self.redraw, self._stale)

    def redraw(self) -> None:
        if not self.is_mounted or not shown(self):
            self._stale = True
            return
        self._stale = False
        width = max(10, (self.scrollable_content_region.width or 60))
        windows = self.windows()
        if not windows:
            body = Content.styled(t("window.empty"), "dim italic")
        else:
            style = mark_style(self.app.current_theme.variables)
            blocks = [Content("\n").join(draw(w, width, style)) for w in windows]
            body = Content("\n\n").join(blocks)
        update_if_changed(self.query_one("#window-body", Static), body)
