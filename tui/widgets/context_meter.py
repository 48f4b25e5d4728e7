"""The "Context" panel: one reconciled meter of how full the context is, and of what.

Users' most frequent complaint about context meters is that the percentage does not match
when compaction fires — because the tool never says what it divides by. This panel says it:
the bar is ``json chars of messages ÷ context_limit``, exactly the measure the trigger
compares, with the target (where micro/fit stop) and the trigger marked on it. Token figures
sit beside the chars: an estimate always, and the tokens that filled the window by the API's
own count when a real model answered (``model_response.context_tokens``: the meter shows it,
it never adds ``usage`` up).

The breakdown is the last main request's own (``model_request.breakdown``, computed once in
core by :mod:`core.compact.breakdown`): the message categories, which add up to the bar's
chars — their column is headed by that very number — and apart from them what is sent with
every call but not counted by the trigger: the system prompt by the category of its sections
(pinned project rules and the work log are re-sent on every call and never compacted, so a
learner should see what they cost) and the tool definitions. The panel formats those
figures; it measures nothing. In a replay it shows ctxlab's side (the Replay panel shows the
original's, and the spark line points to the Timeline tab, which draws both sides).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import set_cell_size
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from core import events as ev
from core.compact.breakdown import MESSAGE_CATEGORIES, SENT_EVERY_CALL
from core.config import Thresholds
from tui.i18n import t
from tui.routing import Routed, RunInfo, handles
from tui.widgets.cache_line import CacheLine
from tui.widgets.meter_marks import LIGHT, MarkStyle, label_rows, mark_style
from tui.widgets.redraw import update_if_changed

BAR_WIDTH = 60  # at most: the bar shrinks to the panel's width, never wraps
SPARK_LEVELS = " ▁▂▃▄▅▆▇█"
LABEL_CELLS = 20  # label column width in terminal cells (a CJK character takes two)
VALUE_CELLS = 8
# Rows only a history that has them shows (another agent's, in a replay): in ctxlab's own
# runs they would be zeros taking the panel's last lines.
WHEN_PRESENT = ("system_messages", "thinking", "images")


def side_by_side(left: Sequence[Content], right: Sequence[Content],
                 column: int) -> list[Content]:
    """Two columns of lines, the left one padded (or cut) to ``column`` cells."""
    lines = []
    for i in range(max(len(left), len(right))):
        here = left[i] if i < len(left) else Content("")
        there = right[i] if i < len(right) else Content("")
        lines.append(Content.assemble(here.truncate(column, ellipsis=True, pad=True), "  ",
                                      there) if there.plain else here)
    return lines


def mark_columns(chars: int, limits: Thresholds, width: int) -> tuple[int, int, int]:
    """The bar's scale (125% of the limit, or ``chars`` past that) and the target's and
    the trigger's columns on it."""
    scale = max(int(limits.context_limit * 1.25), chars, 1)
    return (scale, min(width - 1, round(limits.target / scale * width)),
            min(width - 1, round(limits.context_limit / scale * width)))


def meter_bar(chars: int, limits: Thresholds, width: int = BAR_WIDTH,
              marks: MarkStyle = LIGHT) -> Content:
    """A bar scaled to 125% of the limit (or to ``chars`` past that), the target and the
    trigger marked in the theme's style (:mod:`tui.widgets.meter_marks`), and under it the
    marks' labels when the style has them."""
    scale, target_at, trigger_at = mark_columns(chars, limits, width)
    filled = min(width, round(chars / scale * width))
    parts: list[tuple[str, str]] = []
    for i in range(width):
        over = i >= trigger_at
        if i == trigger_at:
            parts.append((marks.trigger, marks.trigger_style))
        elif i == target_at:
            parts.append((marks.target, marks.target_style))
        elif i < filled:
            parts.append(("█", "$meter-over" if over else "$meter-fill"))
        else:
            parts.append(("░", "$panel-lighten-2"))
    labels = label_rows(target_at, trigger_at, limits.target, limits.context_limit, width,
                        marks)
    return Content("\n").join([Content.assemble(*parts), *labels])


def spark_rows(history: Sequence[int], ceiling: int, width: int, rows: int = 2) -> Content:
    """One column per main call (the newest ``width``), on a fixed scale: full height is
    ``ceiling`` chars, so a tiny first call stays tiny instead of filling the chart."""
    ceiling = max(ceiling, 1)
    levels = len(SPARK_LEVELS) - 1
    shown = list(history)[-width:] if width > 0 else []
    heights = [min(rows * levels, round(min(v, ceiling) / ceiling * rows * levels))
               for v in shown]
    lines = []
    for row in reversed(range(rows)):
        cells = [SPARK_LEVELS[max(0, min(levels, h - row * levels))] for h in heights]
        over = [v > ceiling for v in shown]
        lines.append(Content.assemble(*[(c, "$error" if o else "$accent")
                                        for c, o in zip(cells, over, strict=True)]))
    return Content("\n").join(lines)


class ContextMeter(Routed, Vertical, can_focus=True):
    """Meter, figures, a sparkline of chars per main call, and the category breakdown.

    Focusable, so the panel has a key, can be maximised and scrolls when it is small."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scripted = True  # no API usage to wait for: say so instead of "yet"
        self.border_title = t("panel.context")
        self.limits = Thresholds()
        self.chars = 0
        self.est_tokens = 0
        self.usage_tokens: int | None = None
        self.counted_tokens: int | None = None  # count_tokens, when the run asked for it
        self.history: list[int] = []
        self.breakdown: dict[str, Any] = {}  # the last main request's, as it carried it
        self.recorded = False  # usage_tokens came from a recording, not a live answer
        # kept, not queried: every answer of a replay reaches it
        self.cache_line = CacheLine()  # hidden until a real model reports usage

    def compose(self) -> ComposeResult:
        yield Static(id="meter-figures")
        yield self.cache_line
        yield Static(id="meter-spark")
        yield Static(id="meter-breakdown")

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self.redraw(), init=False)
        self.redraw()

    def marks(self) -> MarkStyle:
        """The theme's style of the target and trigger marks."""
        return mark_style(self.app.current_theme.variables) if self.is_attached else LIGHT

    def on_resize(self, event: events.Resize) -> None:
        self.redraw()

    def width(self) -> int:
        """Cells to draw in (the panel's content width once laid out)."""
        return self.scrollable_content_region.width or BAR_WIDTH

    # -- the events it draws ------------------------------------------------------------------

    @handles(ev.ModelRequest)
    def show_request(self, event: ev.ModelRequest) -> None:
        if event.purpose == "main":
            self.model_request(event)

    @handles(ev.ReplayStep)
    def show_recorded(self, event: ev.ReplayStep) -> None:
        """A replay: the recorded usage is the real-token line (the original's categories
        are the Replay panel's; this meter shows ctxlab's side)."""
        if event.original_tokens:
            self.usage_tokens = event.original_tokens
            self.recorded = True
            self.redraw_once(self.redraw)

    @handles(ev.ModelResponse)
    def show_usage(self, event: ev.ModelResponse) -> None:
        """The API's figures as the event states them; a side call is billed to the turn
        too, and a replay's original is its main call."""
        tokens = event.tokens
        if tokens is None:
            return
        cache = self.cache_line
        cache.usage(tokens, main=event.purpose in ("main", "original"), draw=False)
        self.redraw_once(cache.redraw)
        if event.purpose == "main":
            self.usage_tokens = event.context_tokens
            self.redraw_once(self.redraw)

    @handles(ev.RunStart)
    def price_for(self, event: ev.RunStart) -> None:
        self.cache_line.set_model(event.model)

    @handles(ev.TurnStart)
    def new_turn(self, event: ev.TurnStart) -> None:
        cache = self.cache_line
        cache.turn_start(draw=False)
        self.redraw_once(cache.redraw)

    # -- inputs ---------------------------------------------------------------------------

    def reset(self, run: RunInfo) -> None:
        self.limits = run.limits
        self.scripted = run.scripted
        self.chars = self.est_tokens = 0
        self.usage_tokens = self.counted_tokens = None
        self.history = []
        self.breakdown = {}
        self.recorded = False
        self.cache_line.reset()
        self.redraw()

    def set_limits(self, limits: Thresholds) -> None:
        self.limits = limits
        self.redraw()

    def model_request(self, event: ev.ModelRequest) -> None:
        """A main request: its size, its estimate and the API's count, its breakdown."""
        self.chars, self.est_tokens = event.chars, event.est_tokens
        if event.counted_tokens is not None:
            self.counted_tokens = event.counted_tokens
        self.breakdown = event.breakdown
        self.history.append(event.chars)
        self.redraw_once(self.redraw)

    # -- drawing --------------------------------------------------------------------------

    @property
    def measured(self) -> bool:
        """A main request has been measured. Before it every figure would read 0 while
        History already lists the request and the memories recalled for it, as if they
        weighed nothing: the meter says it has not measured yet instead."""
        return bool(self.history)

    def redraw(self) -> None:
        if not self.is_mounted:
            return
        limits = self.limits
        pct = self.chars / limits.context_limit * 100 if limits.context_limit else 0
        measured = self.measured
        usage = (t("meter.recorded" if self.recorded else "meter.usage", n=self.usage_tokens)
                 if self.usage_tokens is not None
                 else t("meter.no_usage_scripted" if self.scripted else "meter.no_usage"))
        if self.counted_tokens is not None:
            usage += t("meter.counted", n=self.counted_tokens)
        marks = self.marks()
        figures = Content.assemble(
            meter_bar(self.chars, limits, min(BAR_WIDTH, max(10, self.width())), marks), "\n",
            (f"{self.chars:,}" if measured else "—", "bold"),
            t("meter.of_limit", limit=limits.context_limit),
            (f"{pct:.0f}%" if measured else "", "bold $error" if pct > 100 else "bold"),
            (f"  {marks.target}", marks.target_style), t("meter.target", n=limits.target),
            (f"  {marks.trigger}", marks.trigger_style),
            t("meter.trigger", n=limits.context_limit), "\n",
            t("meter.tokens", n=self.est_tokens, usage=usage) if measured
            else (t("meter.unmeasured"), "italic"), "\n",
            (t("meter.bar_note"), "dim italic"),
        )
        update_if_changed(self.query_one("#meter-figures", Static), figures)
        update_if_changed(self.query_one("#meter-spark", Static), self.spark())
        update_if_changed(self.query_one("#meter-breakdown", Static), self.breakdown_view())

    def spark(self) -> Content:
        ceiling = max(int(self.limits.context_limit * 1.25), 1)
        width = min(BAR_WIDTH, max(10, self.width()))
        return Content.assemble(spark_rows(self.history, ceiling, width), "\n",
                                (self.spark_caption(ceiling), "dim italic"))

    def spark_caption(self, ceiling: int) -> str:
        """What the spark line draws. A replay has two sides and it draws ctxlab's only:
        it says so, and where both are (the Timeline tab draws them together, in tokens)."""
        key = getattr(self.app, "panel_keys", {}).get("timeline")
        if self.recorded and key:
            return t("meter.spark_replay", top=ceiling, key=key)
        return t("meter.spark_scale", top=ceiling)

    def breakdown_view(self) -> Content:
        """The message rows under the bar's chars (they add up to them), and apart from
        them what is sent with every call: two columns when both fit with a bar of at least
        3 cells, else one under the other (a wrapped row would push the last rows out of
        the panel). With nothing sent besides (a replay), the message rows take both.
        Before the first main request: what will be measured, not a column of zeros."""
        if not self.measured:
            return Content.styled(t("meter.unmeasured_breakdown"), "dim italic")
        parts = self.breakdown
        messages = [(t(f"cat.{k}"), int(parts.get(k, 0))) for k in MESSAGE_CATEGORIES
                    if k not in WHEN_PRESENT or parts.get(k)]
        besides = [(t(f"cat.{k}"), int(parts[k])) for k in SENT_EVERY_CALL if k in parts]
        widest = max((value for _, value in messages + besides), default=0) or 1
        width = self.width()
        column = (width - 2) // 2
        two = column - LABEL_CELLS - VALUE_CELLS - 1 >= 3
        bar = max(0, min(10, (column if two else width) - LABEL_CELLS - VALUE_CELLS - 1))
        head = Content.styled(t("meter.messages", n=self.chars), "bold")
        rows = [self.cell(name, value, widest, bar) for name, value in messages]
        if besides:
            apart = [Content.styled(t("meter.besides"), "bold $text-muted"),
                     *(self.cell(name, value, widest, bar) for name, value in besides)]
            lines = side_by_side([head, *rows], apart, column) if two \
                else [head, *rows, *apart]
        else:
            half = (len(rows) + 1) // 2
            lines = [head, *side_by_side(rows[:half], rows[half:], column)] if two \
                else [head, *rows]
        return Content("\n").join(line.truncate(width, ellipsis=True) for line in lines)

    @staticmethod
    def cell(name: str, value: int, widest: int, bar_cells: int = 10) -> Content:
        """One row: label, chars, and a bar scaled to the largest row shown."""
        bar = "▇" * max(0, round(value / widest * bar_cells)) if value and bar_cells else ""
        return Content.assemble(set_cell_size(name, LABEL_CELLS),
                                (f"{value:>{VALUE_CELLS},}", "bold"),
                                (f" {bar:<{bar_cells}}" if bar_cells else "", "$accent"))
