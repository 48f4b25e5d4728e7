"""The watch screen: a watched client's requests, one row each, with the selected one's
breakdown, changes, its context window (:mod:`tui.widgets.window_view`), the client's own
compaction stages, and a timeline of the context tokens per request (client compactions
marked, the list's selection its cursor).

The request list is the navigation: ↑/↓, Home/End and ``g`` (a request number) move the
selection, and everything beside it follows — the detail shows the selected request and
the stages pane marks that request's stages and scrolls to them.

It draws the watch events (``watch_start``, ``watch_request``, ``stage``,
``watch_response``) and never touches the proxy. ``ctxlab watch`` opens the workbench on
the watch source; the workbench pushes this screen over its panels
(:mod:`tui.source_views`) and routes the source's events to it in the same batches as to
its own panels (:mod:`tui.routing`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from core.events import Error, Event, Stage, WatchRequest, WatchResponse, WatchStart
from tui.i18n import localize_bindings, t
from tui.notices import Area, keep_notices_over
from tui.routing import Routed, handles
from tui.screens.viewer import Viewer
from tui.widgets.watch_detail import RequestDetail, stage_lines
from tui.widgets.watch_requests import RequestTable
from tui.widgets.watch_timeline import WatchTimeline
from tui.widgets.window_view import WindowView


class WatchScreen(Routed, Screen[None]):
    """Requests on the left, the selected request's window and the timeline under them; its
    detail and the client's stages on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "body", "key.request_body"),
        Binding("g", "go_to", "key.go_to"),
        Binding("q", "app.quit", "key.quit_watch"),
    ]
    DEFAULT_CSS = """
    WatchScreen #watch-status { height: 2; padding: 0 1; color: $text-muted; }
    WatchScreen #watch-main { height: 1fr; }
    WatchScreen #watch-left { width: 3fr; }
    WatchScreen #watch-requests { height: 2fr; border: round $primary; }
    WatchScreen #watch-window { height: 1fr; border: round $primary; }
    WatchScreen #watch-timeline { height: 1fr; min-height: 8; border: round $primary; }
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

    def compose(self) -> ComposeResult:
        yield Static(t("watch.starting"), id="watch-status", markup=False)
        with Horizontal(id="watch-main"):
            with Vertical(id="watch-left"):
                yield RequestTable(id="watch-requests")
                window = WindowView(id="watch-window")
                window.border_title = t("panel.window")
                yield window
                yield WatchTimeline(id="watch-timeline")
            with Vertical(id="watch-side"):
                yield RequestDetail(id="watch-detail")
                stages = Static(t("watch.no_stage"), id="watch-stages", markup=False)
                stages.border_title = t("watch.stages")
                yield stages
        yield Footer()

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
        self._redraw_stages()

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
