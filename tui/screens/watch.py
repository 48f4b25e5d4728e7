"""The watch screen: a watched client's requests, one row each, with the selected one's
breakdown, changes (the counts and the entries: the turn diff against the turn before it in
its conversation), largest items, its context window (:mod:`tui.widgets.window_view`), the
client's own compaction stages, and a timeline of the context tokens per request (client
compactions marked, the list's selection its cursor).

The request list is the navigation: ↑/↓, Home/End and ``g`` (a request number) move the
selection, and everything beside it follows — the detail shows the selected request and
the stages pane marks that request's stages and scrolls to them.

It draws the watch events (``watch_start``, ``watch_request``, ``stage``,
``watch_response``) and never touches the proxy. ``ctxlab watch`` opens the workbench on
the watch source; the workbench pushes this screen over its panels
(:mod:`tui.source_views`) and routes the source's events to it in the same batches as to
its own panels (:mod:`tui.routing`). The diff and the items are read from the bodies the
watch holds (``b`` shows one), once per request selected; ``i`` lists every item, with its
age over the last :data:`AGE_TURNS` turns of its conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from core.events import Error, Event, Stage, WatchRequest, WatchResponse, WatchStart
from core.views.items import Ages, Item, largest
from core.views.sides import previous_turns, sent_history, summary_asked
from core.views.turn_diff import TurnDiff, diff
from tui.i18n import localize_bindings, t
from tui.notices import Area, keep_notices_over
from tui.routing import Routed, handles
from tui.screens.items import ItemsScreen
from tui.screens.viewer import Viewer
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.watch_detail import RequestDetail, changes_content, stage_lines
from tui.widgets.watch_requests import RequestTable
from tui.widgets.watch_timeline import WatchTimeline
from tui.widgets.window_view import WindowView

AGE_TURNS = 8  # turns of a conversation read back to date its items: a body can be large
ITEMS = 50  # items listed


class WatchScreen(Routed, Screen[None]):
    """Requests on the left, and under them the selected request's window, its changes and
    the timeline, one at a time; its detail and the client's stages on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "body", "key.request_body"),
        Binding("g", "go_to", "key.go_to"),
        Binding("v", "next_view", "key.watch_view"),
        Binding("i", "items", "key.watch_items"),
        Binding("q", "app.quit", "key.quit_watch"),
    ]
    DEFAULT_CSS = """
    WatchScreen #watch-status { height: 2; padding: 0 1; color: $text-muted; }
    WatchScreen #watch-main { height: 1fr; }
    WatchScreen #watch-left { width: 3fr; }
    WatchScreen #watch-requests { height: 1fr; border: round $primary; }
    WatchScreen #watch-views { height: 1fr; min-height: 10; }
    WatchScreen #watch-views TabPane { padding: 0; height: 1fr; }
    WatchScreen #watch-changes { height: 1fr; padding: 0 1; overflow-y: auto; }
    WatchScreen #watch-window, WatchScreen #watch-timeline { height: 1fr; }
    WatchScreen #watch-side { width: 2fr; }
    WatchScreen #watch-detail { height: 2fr; border: round $primary; padding: 0 1;
                                overflow-y: auto; }
    WatchScreen #watch-stages { height: 1fr; border: round $accent; padding: 0 1;
                                overflow-y: auto; }
    """

    def __init__(self, body_of: Callable[[int], bytes | None] | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.body_of = body_of
        self.requests: dict[int, WatchRequest] = {}
        self.responses: dict[int, WatchResponse] = {}
        self.stages: dict[int, list[Stage]] = {}
        self.errors: list[str] = []
        self._last_request: int | None = None
        self.recording = ""  # the recording's path (WatchStart); "" under --no-record
        self._read: tuple[int, TurnDiff | None, list[Item]] | None = None  # the last read

    def compose(self) -> ComposeResult:
        yield Static(t("watch.starting"), id="watch-status", markup=False)
        with Horizontal(id="watch-main"):
            with Vertical(id="watch-left"):
                yield RequestTable(id="watch-requests")
                with TabbedContent(id="watch-views"):
                    with TabPane(t("watch.changes"), id="watch-changes-pane"):
                        yield Static("", id="watch-changes", markup=False)
                    with TabPane(t("panel.window"), id="watch-window-pane"):
                        yield WindowView(id="watch-window")
                    with TabPane(t("panel.timeline"), id="watch-timeline-pane"):
                        yield WatchTimeline(id="watch-timeline")
            with Vertical(id="watch-side"):
                yield RequestDetail(id="watch-detail")
                stages = Static(t("watch.no_stage"), id="watch-stages", markup=False)
                stages.border_title = t("watch.stages")
                yield stages
        yield KeysFooter()

    def on_mount(self) -> None:
        # never over the selected request: over the requests' column, the full height
        keep_notices_over(self, Area(columns="#watch-requests", rows="#watch-main"))

    # -- events ----------------------------------------------------------------------------

    @handles(WatchStart, WatchRequest, Stage, WatchResponse, Error)
    def show(self, event: Event) -> None:
        """Draw one event of the watch (errors are said by the workbench itself)."""
        table = self.query_one(RequestTable)
        self.query_one(WindowView).see(event)
        self.query_one(WatchTimeline).see(event)
        if isinstance(event, WatchStart):
            self.recording = event.recording
            where = t("watch.recording", path=event.recording) if event.recording else ""
            self.query_one("#watch-status", Static).update(
                t("watch.watching", listen=event.listen, upstream=event.upstream,
                  recording=where) + "\n" + t("watch.point", listen=event.listen))
        elif isinstance(event, WatchRequest):
            self.requests[event.id] = event
            self._last_request = event.id
            table.add_request(event)
        elif isinstance(event, Stage) and self._last_request is not None:
            # a request's stages are emitted right after it, with nothing in between
            self.stages.setdefault(self._last_request, []).append(event)
            self._redraw_stages()
        elif isinstance(event, WatchResponse):
            self.responses[event.id] = event
            table.add_response(event)
        elif isinstance(event, Error):
            self.errors.append(event.message)
        self._show_selected()

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self._show_selected()

    def selected_id(self) -> int | None:
        table = self.query_one(RequestTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return int(key.value) if key.value is not None else None

    def _show_selected(self) -> None:
        chosen = self.selected_id()
        self.query_one(WatchTimeline).select(chosen)
        if chosen is None or chosen not in self.requests:
            return
        self.query_one(RequestDetail).show(self.requests[chosen], self.responses.get(chosen),
                                           self.stages.get(chosen, []))
        self.query_one(WindowView).show("watched", chosen)
        self.query_one("#watch-changes", Static).update(changes_content(*self.read(chosen)))
        self._redraw_stages()

    def read(self, chosen: int) -> tuple[TurnDiff | None, list[Item]]:
        """The turn diff and the largest items of request ``chosen``, from the bodies held
        (read once: the screen redraws on every event)."""
        if self._read is not None and self._read[0] == chosen:
            return self._read[1], self._read[2]
        current = self._history(chosen)
        turns = previous_turns(self.requests, chosen)
        ages = Ages()
        lists = [self._history(i) for i in reversed(turns[:AGE_TURNS])]
        for messages in [*lists, current]:
            if messages is not None:
                ages.observe(messages)
        turn = None
        if current is not None and turns and lists and lists[-1] is not None:
            turn = diff(lists[-1], current,
                        summary_asked=summary_asked(self.requests, chosen, turns[0]))
        elif current is not None and not turns:
            turn = diff([], current)
        items = largest(current, ITEMS, ages=ages) if current is not None else []
        self._read = (chosen, turn, items)
        return turn, items

    def _history(self, request_id: int) -> list[Any] | None:
        return sent_history(self.body_of(request_id) if self.body_of else None)

    def _redraw_stages(self) -> None:
        """Every stage, the selected request's marked (▶) and scrolled to."""
        chosen = self.selected_id()
        pane = self.query_one("#watch-stages", Static)
        lines: list[str] = []
        first: int | None = None
        for request_id, stages in self.stages.items():
            for stage in stages:
                mine = request_id == chosen
                if mine and first is None:
                    first = len(lines)
                lines += [f"{'▶ ' if mine else ''}#{request_id}", *stage_lines(stage)]
        if lines:
            pane.update("\n".join(lines))
        pane.border_subtitle = t("watch.stages_of", id=chosen,
                                 n=len(self.stages.get(chosen, []))) \
            if chosen is not None else ""
        if first is not None:
            pane.scroll_to(y=first, animate=False)

    # -- actions ---------------------------------------------------------------------------

    def action_next_view(self) -> None:
        """Under the list, the next of the selected request's views: its changes, its
        window, the timeline (one at a time: together they would leave each a few rows)."""
        views = self.query_one("#watch-views", TabbedContent)
        panes = [pane.id for pane in views.query(TabPane) if pane.id]
        at = panes.index(views.active) if views.active in panes else -1
        views.active = panes[(at + 1) % len(panes)]

    def action_go_to(self) -> None:
        """Select a request by its number (the detail and the stages follow)."""
        from tui.screens.go_to import GoToScreen

        table = self.query_one(RequestTable)

        def chosen(number: int | None) -> None:
            if number is None:
                return
            if str(number) in table.rows:
                table.move_cursor(row=table.get_row_index(str(number)))
                table.focus()
            else:
                self.notify(t("notice.no_request", id=number), severity="warning")

        self.app.push_screen(GoToScreen(self.selected_id() or 0), chosen)

    def action_body(self) -> None:
        chosen = self.selected_id()
        if chosen is None:
            return
        raw = self.body_of(chosen) if self.body_of else None
        if raw is None:
            self.notify(t("notice.body_gone", path=self.recording) if self.recording
                        else t("notice.body_gone_unrecorded"))
            return
        try:
            text = json.dumps(json.loads(raw), ensure_ascii=False, indent=2)
        except ValueError:
            text = raw.decode("utf-8", errors="replace")
        self.app.push_screen(Viewer(t("watch.body_title", id=chosen), text, "json"))

    def action_items(self) -> None:
        chosen = self.selected_id()
        if chosen is None:
            return
        _, items = self.read(chosen)
        if not items:
            self.notify(t("watch.no_items"))
            return
        self.app.push_screen(ItemsScreen(t("watch.items_title", id=chosen),
                                         t("watch.items_note", n=AGE_TURNS), items))
