"""The "Context" panel: one reconciled meter of how full the context is, and of what.

Users' most frequent complaint about context meters is that the percentage does not match
when compaction fires — because the tool never says what it divides by. This panel says it:
the bar is ``json chars of messages ÷ context_limit``, exactly the measure the trigger
compares, with the target (where micro/fit stop) and the trigger marked on it. The system
prompt and tool definitions are sent too but the trigger does not count them, so they appear
in the breakdown, not in the bar. Token figures sit beside the chars: an estimate always,
and the tokens that filled the window by the API's own count when a real model answered
(``model_response.context_tokens``: the meter shows it, it never adds ``usage`` up).

The breakdown groups the system prompt by the category the engine gives each section
(``system``, ``memory``, ``pinned``): pinned project rules and the work log are re-sent on
every call and never compacted, so a learner should see what they cost.
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
from core.config import Thresholds
from core.measure import json_chars, list_chars
from core.tools import TOOL_SCHEMAS
from tui.i18n import t
from tui.routing import Routed, handles
from tui.widgets.cache_line import CacheLine
from tui.widgets.redraw import update_if_changed
from tui.widgets.render import text_kind

BAR_WIDTH = 60  # at most: the bar shrinks to the panel's width, never wraps
SPARK_LEVELS = " ▁▂▃▄▅▆▇█"
TOOL_DEFINITION_CHARS = json_chars(TOOL_SCHEMAS)
MESSAGE_CATEGORIES = ("conversation text", "tool calls", "tool results",
                      "pointers & previews", "summaries & markers", "JSON structure")
# Each breakdown row's label (a message id); the keys above stay the measuring code's own.
CATEGORY_LABELS = {
    "conversation text": "cat.text", "tool calls": "cat.tool_calls",
    "tool results": "cat.tool_results", "pointers & previews": "cat.pointers",
    "summaries & markers": "cat.summaries", "JSON structure": "cat.json",
}
LABEL_CELLS = 20  # label column width in terminal cells (a CJK character takes two)
VALUE_CELLS = 8


def message_categories(message: dict[str, Any]) -> dict[str, int]:
    """Split one message's JSON length into categories that add up to it exactly."""
    sizes = dict.fromkeys(MESSAGE_CATEGORIES, 0)
    content = message.get("content")
    if isinstance(content, str):
        shape = text_kind(content, message)
        key = "conversation text" if shape == "text" else (
            "summaries & markers" if shape in ("summary", "marker") else "pointers & previews")
        sizes[key] += json_chars(content)
    else:
        for block in content or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                sizes["conversation text"] += json_chars(block.get("text", ""))
            elif kind == "tool_use":
                sizes["tool calls"] += json_chars(block)
            elif kind == "tool_result":
                value = block.get("content", "")
                shape = text_kind(value)
                key = "tool results" if shape == "text" else "pointers & previews"
                sizes[key] += json_chars(value)
    sizes["JSON structure"] = json_chars(message) - sum(sizes.values())
    return sizes


class CategoryCache:
    """Per-message category sizes, kept by identity: the engine never mutates a message it
    has shown (it copies on change), so each message is measured once, however long."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[dict[str, Any], dict[str, int]]] = {}

    def totals(self, messages: Sequence[dict[str, Any]]) -> tuple[dict[str, int], int]:
        fresh: dict[int, tuple[dict[str, Any], dict[str, int]]] = {}
        totals = dict.fromkeys(MESSAGE_CATEGORIES, 0)
        sizes: list[int] = []
        for message in messages:
            hit = self._seen.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, message_categories(message))
            fresh[id(message)] = hit
            for key, value in hit[1].items():
                totals[key] += value
            sizes.append(sum(hit[1].values()))
        self._seen = fresh
        chars = list_chars(sizes)
        totals["JSON structure"] += chars - sum(sizes)  # the list's own brackets and commas
        return totals, chars


def meter_bar(chars: int, limits: Thresholds, width: int = BAR_WIDTH) -> Content:
    """A bar scaled to 125% of the limit (or to ``chars`` past that), ┊ target, │ trigger."""
    scale = max(int(limits.context_limit * 1.25), chars, 1)
    filled = min(width, round(chars / scale * width))
    target_at = min(width - 1, round(limits.target / scale * width))
    trigger_at = min(width - 1, round(limits.context_limit / scale * width))
    parts: list[tuple[str, str]] = []
    for i in range(width):
        over = i >= trigger_at
        if i == trigger_at:
            parts.append(("│", "bold $error"))
        elif i == target_at:
            parts.append(("┊", "bold $warning"))
        elif i < filled:
            parts.append(("█", "$meter-over" if over else "$meter-fill"))
        else:
            parts.append(("░", "$panel-lighten-2"))
    return Content.assemble(*parts)


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
        self.sections: tuple[dict[str, Any], ...] = ()
        self.cache = CategoryCache()
        self.categories: dict[str, int] = dict.fromkeys(MESSAGE_CATEGORIES, 0)
        self.extra: dict[str, int] = {}  # a replay's original thinking and images
        self.recorded = False  # usage_tokens came from a recording, not a live answer

    def compose(self) -> ComposeResult:
        yield Static(id="meter-figures")
        yield CacheLine()  # hidden until a real model reports usage
        yield Static(id="meter-spark")
        yield Static(id="meter-breakdown")

    def on_mount(self) -> None:
        self.redraw()

    def on_resize(self, event: events.Resize) -> None:
        self.redraw()

    def width(self) -> int:
        """Cells to draw in (the panel's content width once laid out)."""
        return self.scrollable_content_region.width or BAR_WIDTH

    # -- the events it draws ------------------------------------------------------------------

    @handles(ev.SystemPrompt)
    def show_system_prompt(self, event: ev.SystemPrompt) -> None:
        self.system(event.sections)

    @handles(ev.ModelRequest)
    def show_request_size(self, event: ev.ModelRequest) -> None:
        if event.purpose == "main":
            self.model_request(event.chars, event.est_tokens, event.counted_tokens)

    @handles(ev.ReplayStep)
    def show_recorded(self, event: ev.ReplayStep) -> None:
        """A replay: the recorded usage is the real-token line, and the original history's
        thinking and images get rows of their own (ctxlab's history carries neither)."""
        if event.original_tokens:
            self.usage_tokens = event.original_tokens
            self.recorded = True
        self.extra = {"meter.thinking": int(event.categories.get("thinking", 0)),
                      "meter.images": int(event.categories.get("image", 0))}
        self.redraw_once(self.redraw)

    @handles(ev.ModelResponse)
    def show_usage(self, event: ev.ModelResponse) -> None:
        """The API's figures as the event states them; a side call is billed to the turn
        too, and a replay's original is its main call."""
        tokens = event.tokens
        if tokens is None:
            return
        cache = self.query_one(CacheLine)
        cache.usage(tokens, main=event.purpose in ("main", "original"), draw=False)
        self.redraw_once(cache.redraw)
        if event.purpose == "main":
            self.usage_tokens = event.context_tokens
            self.redraw_once(self.redraw)

    @handles(ev.RunStart)
    def price_for(self, event: ev.RunStart) -> None:
        self.query_one(CacheLine).set_model(event.model)

    @handles(ev.TurnStart)
    def new_turn(self, event: ev.TurnStart) -> None:
        cache = self.query_one(CacheLine)
        cache.turn_start(draw=False)
        self.redraw_once(cache.redraw)

    # -- inputs ---------------------------------------------------------------------------

    def reset(self, limits: Thresholds, scripted: bool | None = None) -> None:
        self.limits = limits
        if scripted is not None:
            self.scripted = scripted
        self.chars = self.est_tokens = 0
        self.usage_tokens = self.counted_tokens = None
        self.history = []
        self.sections = ()
        self.categories = dict.fromkeys(MESSAGE_CATEGORIES, 0)
        self.extra = {}
        self.recorded = False
        self.query_one(CacheLine).reset()
        self.redraw()

    def set_limits(self, limits: Thresholds) -> None:
        self.limits = limits
        self.redraw()

    def model_request(self, chars: int, est_tokens: int, counted: int | None = None) -> None:
        self.chars, self.est_tokens = chars, est_tokens
        self.counted_tokens = counted if counted is not None else self.counted_tokens
        self.history.append(chars)
        self.redraw_once(self.redraw)

    def measure(self, messages: Sequence[dict[str, Any]]) -> None:
        """Re-measure the history as it stands now (called after stages and turns)."""
        self.categories, self.chars = self.cache.totals(messages)
        self.redraw()

    def system(self, sections: tuple[dict[str, Any], ...]) -> None:
        if sections != self.sections:
            self.sections = sections
            self.redraw_once(self.redraw)

    # -- drawing --------------------------------------------------------------------------

    def redraw(self) -> None:
        if not self.is_mounted:
            return
        limits = self.limits
        pct = self.chars / limits.context_limit * 100 if limits.context_limit else 0
        usage = (t("meter.recorded" if self.recorded else "meter.usage", n=self.usage_tokens)
                 if self.usage_tokens is not None
                 else t("meter.no_usage_scripted" if self.scripted else "meter.no_usage"))
        if self.counted_tokens is not None:
            usage += t("meter.counted", n=self.counted_tokens)
        figures = Content.assemble(
            meter_bar(self.chars, limits, min(BAR_WIDTH, max(10, self.width()))), "\n",
            (f"{self.chars:,}", "bold"), t("meter.of_limit", limit=limits.context_limit),
            (f"{pct:.0f}%", "bold $error" if pct > 100 else "bold"),
            ("  ┊", "bold $warning"), t("meter.target", n=limits.target),
            ("  │", "bold $error"), t("meter.trigger", n=limits.context_limit), "\n",
            t("meter.tokens", n=self.est_tokens, usage=usage), "\n",
            (t("meter.bar_note"), "dim italic"),
        )
        update_if_changed(self.query_one("#meter-figures", Static), figures)
        update_if_changed(self.query_one("#meter-spark", Static), self.spark())
        update_if_changed(self.query_one("#meter-breakdown", Static), self.breakdown())

    def spark(self) -> Content:
        ceiling = max(int(self.limits.context_limit * 1.25), 1)
        width = min(BAR_WIDTH, max(10, self.width()))
        return Content.assemble(spark_rows(self.history, ceiling, width), "\n",
                                (t("meter.spark_scale", top=ceiling), "dim italic"))

    def breakdown(self) -> Content:
        rows = self.system_rows() + [(t(CATEGORY_LABELS[k]), v)
                                     for k, v in self.categories.items()]
        rows += [(t(key), value) for key, value in self.extra.items()]
        total = sum(v for _, v in rows) or 1
        width = self.width()
        # Two columns when both fit with a bar of at least 3 cells, else one: a wrapped row
        # would push the last rows out of the panel.
        two = (width - 2) // 2 - LABEL_CELLS - VALUE_CELLS - 1 >= 3
        bar = ((width - 2) // 2 if two else width) - LABEL_CELLS - VALUE_CELLS - 1
        cells = [self.cell(name, value, total, max(0, min(10, bar))) for name, value in rows]
        half = (len(cells) + 1) // 2 if two else len(cells)
        lines = []
        for i in range(half):
            right = cells[i + half] if two and i + half < len(cells) else Content("")
            lines.append(Content.assemble(cells[i], "  " if two else "", right))
        title = Content.assemble((t("meter.breakdown"), "bold"),
                                 (t("meter.breakdown_total", n=total), "dim"))
        return Content("\n").join([title, *lines])

    def system_rows(self) -> list[tuple[str, int]]:
        """System-prompt chars by the category of each section, then the tool schemas."""
        sizes = {"system": 0, "memory": 0, "recalled": 0, "pinned": 0}
        for section in self.sections:
            sizes[section_group(section)] += int(section.get("chars", 0))
        return [(t("cat.system"), sizes["system"]), (t("cat.memory"), sizes["memory"]),
                (t("cat.recalled"), sizes["recalled"]), (t("cat.pinned"), sizes["pinned"]),
                (t("cat.tools"), TOOL_DEFINITION_CHARS)]

    @staticmethod
    def cell(name: str, value: int, total: int, bar_cells: int = 10) -> Content:
        share = value / total
        bar = "▇" * max(0, round(share * bar_cells)) if value and bar_cells else ""
        return Content.assemble(set_cell_size(name, LABEL_CELLS),
                                (f"{value:>{VALUE_CELLS},}", "bold"),
                                (f" {bar:<{bar_cells}}" if bar_cells else "", "$accent"))


def section_group(section: dict[str, Any]) -> str:
    """``system``, ``memory``, ``recalled`` or ``pinned`` for one system-prompt section.

    The engine's ``category`` decides (``system`` / ``memory`` / ``pinned``); within memory,
    the records recalled for this request are told apart from the rules and catalog, since
    they change with every request. An event without categories (an old JSONL log) falls
    back to the section's name, as the engine itself does.
    """
    name = str(section.get("name", "")).lower()
    category = str(section.get("category") or "")
    if not category:
        category = "pinned" if name.startswith("rules:") or name == "worklog" else (
            "memory" if "memory" in name or "recall" in name else "system")
    if category == "memory" and ("relevant" in name or "recall" in name):
        return "recalled"
    return category if category in ("system", "memory", "pinned") else "system"
