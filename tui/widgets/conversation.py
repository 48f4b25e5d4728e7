"""The conversation as the user lived it: requests, streamed answers, tools, and stage marks.

New widgets are mounted in batches (every :data:`FLUSH_SECONDS`), because each mount costs a
layout pass of the whole screen and a fast scenario emits dozens of events per frame.
Assistant text streams into a ``Markdown`` widget through ``Markdown.get_stream`` once that
widget is on screen; text that arrived before is written in one piece. The scroll view is
anchored so it follows the stream until the user scrolls away. Each compaction stage leaves
a one-line mark where it happened, so the history reads as a story: "here the middle was
archived", "here results became pointers". What the model actually sees is the other tab.

With a break switch on, the history the agent is about to send can violate the API's
pairing rule; each ``violation`` event leaves a red line naming the tool_use id and the
stage that caused it, right before the call that would be refused. Scenario probes leave a
line saying whether a fact stated early is still visible to the model.

The keyboard moves through the history's *items* — tool calls and stage marks — with ↑/↓,
instead of making each of dozens of tool calls a Tab stop (the panel is one stop). Enter
opens or closes a tool call, or opens the inspector on a stage mark; ``r`` shows a tool's
whole result. A new session of the scenario starts under a divider. The items between two
other entries are lines of one widget (:mod:`tui.widgets.item_run`), and only the newest
entries take part in the layout while the History follows the run; older ones are parked
and come back as the reader goes back (:mod:`tui.widgets.history_window`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from core import events as ev
from core.events import PairViolation, ProbeChecked, Stage, ToolCall, ToolResult
from tui.i18n import localize_bindings, t
from tui.nav_search import Query
from tui.routing import Routed, RunInfo, Turns, handles
from tui.widgets.history_item import HistoryItem
from tui.widgets.history_news import news_line, probe_line, violation_line
from tui.widgets.history_search import item_matches
from tui.widgets.history_window import HistoryWindow, parked
from tui.widgets.item_run import ItemRun
from tui.widgets.stage_mark import StageMark
from tui.widgets.tool_block import Lookup, ToolBlock

MAX_WIDGETS = 400  # a long live session keeps the newest; the transcripts keep the rest
Entry = Widget | HistoryItem  # what the History is given: a widget, or an item of a run
MEASURE_AT_ONCE = 100  # new items of a run measured between two looks at the clock
FLUSH_SECONDS = 0.03
# a stage event -> why it fired, in one line, worked out when asked (under the limits in
# force when the stage came: most marks of a fast replay are never measured)
Explain = Callable[[Stage], Callable[[], str]]


async def stop_stream(stream: MarkdownStream) -> None:
    """Stop an answer's stream, and wait for its last text to be written.

    ``MarkdownStream.stop`` cancels the stream's task and awaits it. A task cancelled before
    its first step never reaches its own handler for the cancellation: it ends cancelled, and
    awaiting it raises ``CancelledError`` in the caller. Here the caller is most often the
    app's own message loop (an answer ends during a routing), which takes that error for its
    own cancellation and stops for good: the workbench would draw nothing more and take no
    key. So only a cancellation of the calling task itself goes on."""
    try:
        await stream.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise


class Conversation(Routed, VerticalScroll, can_focus_children=False):
    """History view fed by the app's event handlers; one Tab stop, ↑/↓ between items."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "cursor(1)", "key.item", key_display="↑↓"),
        Binding("up", "cursor(-1)", "key.item", show=False),
        Binding("enter", "activate", "key.open"),
        Binding("r", "full_result", "key.full_result", show=False),
    ]

    class InspectStage(Message):
        """Enter on a stage mark: the app opens the inspector on that stage."""

        def __init__(self, event: Stage) -> None:
            super().__init__()
            self.event = event

    def __init__(self, lookup: Lookup, explain: Explain | None = None, *,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.lookup = lookup
        self.explain = explain  # a stage's "why it fired" line (None: no line)
        self.item_cursor: HistoryItem | None = None
        self._pending: list[Entry] = []
        self._flush_due = False
        self._md: Markdown | None = None  # the assistant answer being written
        self._md_text: list[str] = []
        self._stream: MarkdownStream | None = None
        self._tools: dict[str, ToolBlock] = {}
        self._run: ItemRun | None = None  # the run new items join (None: a new one)
        self.search = Query()  # the search in force: items that do not match are hidden
        self.window = HistoryWindow(self, MAX_WIDGETS)  # which items are laid out

    async def reset(self, run: RunInfo | None = None) -> None:
        await self.end_assistant()
        self._pending.clear()
        self._tools.clear()
        self._run = None
        self.item_cursor = None
        self.window.clear()
        await self.remove_children()

    # -- the keyboard: an item cursor -------------------------------------------------------

    def runs(self) -> list[ItemRun]:
        return [w for w in self.children if isinstance(w, ItemRun)]

    def items(self) -> list[HistoryItem]:
        """The items shown (the search's matches), oldest first."""
        return [item for run in self.runs() if run.display for item in run.shown]

    def all_items(self) -> list[HistoryItem]:
        """Every item kept, shown or not, oldest first."""
        return [item for run in self.window.entries if isinstance(run, ItemRun)
                for item in run.items]

    def narrow(self, query: Query) -> int:
        """Show only the items matching ``query`` (all, when empty); how many match. The
        widgets stay: hiding is cheap, building them again per key typed is not. A search
        looks through every item; without one, the older items are parked again."""
        self.search = query
        if not query.empty:
            self.window.show_all(self.matches)
        matches = 0
        for widget in self.children:
            shown = self.matches(widget) and not parked(widget)
            widget.display = shown
            if shown:
                matches += len(widget.shown) if isinstance(widget, ItemRun) else 1
        if not query.empty:
            self.release_anchor()
            self.scroll_home(animate=False)
        else:
            if self.item_cursor is None:
                self.window.park_older()
            self.anchor()
        return matches

    def matches(self, widget: Widget) -> bool:
        """Whether an entry shows under the search in force (a run: any item of it, and it
        shows only those)."""
        if isinstance(widget, ItemRun):
            search = self.search
            return widget.narrow(lambda item: item_matches(item, search)) > 0
        return item_matches(widget, self.search)

    def action_cursor(self, step: int) -> None:
        """Select the next (1) or previous (-1) item; the newest first when none is. Above
        the first item shown, the parked items before it come back first."""
        items = self.items()
        if not items:
            self.scroll_relative(y=step)
            return
        if self.item_cursor in items:
            at = items.index(self.item_cursor) + step
            if at < 0 and self.window.bring_back(self.matches):
                self.call_after_refresh(self.action_cursor, step)
                return
            at = max(0, min(len(items) - 1, at))
        else:
            at = len(items) - 1
        self.select(items[at])

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.call_after_refresh(self._pointer_moved)
        if new_value <= 0 < old_value and self.search.empty and \
                self.window.first_shown() > 0:
            first = next((w for w in self.children if w.display), None)
            # the page before it, the view kept where the reader was
            if self.window.bring_back(self.matches) and first is not None:
                self.call_after_refresh(self.scroll_to_widget, first, animate=False, top=True)

    def _pointer_moved(self) -> None:
        """What is under the pointer changed with the scroll: the hover follows it."""
        for run in self.runs():
            if run.hover is not None or run.region.contains_point(self.app.mouse_position):
                run.pointer_moved()

    def select(self, item: HistoryItem) -> None:
        old, self.item_cursor = self.item_cursor, item
        if old is not None and old.run is not None and old.run is not item.run:
            old.run.set_cursor(None)
        if item.run is not None:
            item.run.set_cursor(item)
        self.release_anchor()
        self.show_item(item)

    def show_item(self, item: HistoryItem, tries: int = 2) -> None:
        """Scroll so the item is in view, once its run is laid out at the item's height (an
        item just opened is taller than the run laid out before: it tries again after the
        next refresh)."""
        run = item.run
        if run is None or run.parent is not self:
            return
        region = run.region_of(item) if run.size.height else None
        if region is not None and region.bottom <= run.size.height:
            self.scroll_to_region(region.translate(run.virtual_region.offset),
                                  animate=False, immediate=True)
        elif tries:
            self.call_after_refresh(self.show_item, item, tries - 1)

    def _on_focus_change(self) -> None:
        """The cursor is brighter while the History has the focus."""
        run = self.item_cursor.run if self.item_cursor is not None else None
        if run is not None:
            run.refresh()

    def on_focus(self) -> None:
        self._on_focus_change()

    def on_blur(self) -> None:
        self._on_focus_change()

    def action_activate(self) -> None:
        item = self.item_cursor if self.item_cursor in self.items() else None
        if isinstance(item, ToolBlock):
            item.collapsed = not item.collapsed
            self.show_item(item)
        elif isinstance(item, StageMark):
            self.post_message(self.InspectStage(item.event))
        else:
            self.action_cursor(1)

    def action_full_result(self) -> None:
        if isinstance(self.item_cursor, ToolBlock):
            self.item_cursor.open_result()

    def _add(self, item: Entry) -> None:
        """A widget, or an item of a run, after the others (mounted with the next flush)."""
        self._pending.append(item)
        if self._redraws is not None:  # within a batch: mounted once, right after it
            self.redraw_once(self.flush)
        elif not self._flush_due:
            self._flush_due = True
            self.set_timer(FLUSH_SECONDS, self.flush)

    async def flush(self) -> None:
        """Mount what is pending in one go; start streaming into a freshly shown answer.
        While the History follows the run, only the newest
        :data:`~tui.widgets.history_window.WINDOW` items are laid
        out (a burst of hundreds mounts the older ones parked at once)."""
        self._flush_due = False
        if self._redraws is not None:  # a batch is being routed (it yields now and then):
            self.redraw_once(self.flush)  # its end mounts everything, in order
            return
        items, self._pending = self._pending, []
        if items:
            following = self.item_cursor is None and self.search.empty
            widgets = self._into_runs(items)
            if not self.search.empty:  # a search in force hides what does not match
                for widget in widgets:
                    widget.display = self.matches(widget)
            await self.window.add(widgets, following)
            run = self._run
            if run is not None:  # measured between turns of the loop, not in a frame
                if not self.search.empty:  # its new items may be the first it shows
                    run.display = bool(run.shown)
                turns = Turns.current()
                while run.measure_some(MEASURE_AT_ONCE) and run is self._run:
                    await turns.give()
            if self.item_cursor is None:  # follow the stream unless the reader is on an item
                self.anchor()
        if self._md is not None and self._md.is_mounted and self._stream is None:
            self._stream = Markdown.get_stream(self._md)
            await self._stream.write("".join(self._md_text))

    def _into_runs(self, entries: list[Entry]) -> list[Widget]:
        """The widgets to mount for these entries: items join the run the last items
        joined, unless a widget came between them (then a new run starts)."""
        widgets: list[Widget] = []
        batch: list[HistoryItem] = []
        for entry in entries:
            if isinstance(entry, HistoryItem):
                if self._run is None:
                    self._run = ItemRun(focused=lambda: self.has_focus, show=self.show_item)
                    widgets.append(self._run)
                batch.append(entry)
                continue
            if batch and self._run is not None:
                self._run.add(batch)
            batch, self._run = [], None
            widgets.append(entry)
        if batch and self._run is not None:
            self._run.add(batch)
        return widgets

    # -- the events it draws ------------------------------------------------------------------

    @handles(ev.TurnStart)
    async def show_request(self, event: ev.TurnStart) -> None:
        await self.user(event.request)

    @handles(ev.ModelResponse, ev.TurnEnd, ev.RunEnd)
    async def close_answer(self, event: ev.Event) -> None:
        if not isinstance(event, ev.ModelResponse) or event.purpose == "main":
            await self.end_assistant()

    @handles(ev.PointerBroken, ev.Retry, ev.MemorySelected, ev.MemoryWritten,
             ev.MemoryConsolidated, ev.MemoryConsolidationFailed, ev.Error)
    async def note(self, event: ev.Event) -> None:
        """One line for the events that are news in the conversation."""
        line = news_line(event)
        if line is not None:
            await self.notice(*line)

    # -- drawing ------------------------------------------------------------------------------

    async def user(self, text: str) -> None:
        await self.end_assistant()
        self._add(Static(Content.assemble((t("conv.you"), "bold $accent"), "  ", text),
                         classes="msg-user"))

    async def assistant(self, text: str) -> None:
        if self._md is None:
            self._md = Markdown(classes="msg-assistant")
            self._md_text = []
            self._add(self._md)
        self._md_text.append(text)
        if self._stream is not None:
            await self._stream.write(text)

    async def end_assistant(self) -> None:
        md, self._md = self._md, None
        stream, self._stream = self._stream, None
        if stream is not None:
            await stop_stream(stream)
            text = "".join(self._md_text)
            # a stream stopped before its task first ran drops what was written to it
            if md is not None and md.source != text:
                await md.update(text)
        elif md is not None and md in self._pending:  # never shown yet: mount it whole
            self._pending[self._pending.index(md)] = Markdown("".join(self._md_text),
                                                              classes="msg-assistant")
        elif md is not None:  # being mounted, its stream not begun: it gets the whole text,
            # after its own mount (which sets an empty source) has run
            md.call_later(md.update, "".join(self._md_text))

    @handles(ToolCall)
    async def tool_call(self, event: ToolCall) -> None:
        await self.end_assistant()
        block = ToolBlock(event.id, event.name, event.input, self.lookup)
        self._tools[event.id] = block
        self._add(block)

    @handles(ToolResult)
    def tool_result(self, event: ToolResult) -> None:
        block = self._tools.get(event.id)
        if block is not None:
            block.set_result(event.chars, event.is_error)

    @handles(Stage)
    async def stage(self, event: Stage) -> None:
        why = self.explain(event) if self.explain is not None else (lambda: "")
        await self.end_assistant()
        self._add(StageMark(event, why))

    @handles(ev.SessionStart)
    async def divider(self, event: ev.SessionStart) -> None:
        """Where a new session of the scenario starts (a fresh agent, memory carried over)."""
        if event.session <= 1:
            return
        await self.end_assistant()
        label = t("conv.session", n=event.session, total=event.sessions)
        self._add(Static(Content.styled(f" {label} ", "bold reverse"), classes="msg-divider"))

    @handles(PairViolation)
    async def violation(self, event: PairViolation) -> None:
        """A red marker: this history breaks tool_use/tool_result pairing (a break switch)."""
        await self.end_assistant()
        self._add(Static(violation_line(event), classes="msg-violation"))

    @handles(ProbeChecked)
    async def probe(self, event: ProbeChecked) -> None:
        """Could the model still answer a question about something said early on?"""
        await self.end_assistant()
        self._add(Static(probe_line(event), classes="msg-notice"))

    async def notice(self, text: str, style: str = "dim", classes: str = "msg-notice") -> None:
        await self.end_assistant()
        self._add(Static(Content.styled(text, style), classes=classes))

