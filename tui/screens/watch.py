"""The watch screen: a watched client's requests, one row each, with the selected one's
breakdown, changes and the client's own compaction stages.

It renders any event source that speaks the watch events (``watch_start``,
``watch_request``, ``stage``, ``watch_response``): the source's ``async run(emit)`` runs in
a worker on the app's loop and every event is posted to the screen as a message, so the
screen never touches the proxy. ``ctxlab watch`` opens the workbench on the watch source,
which hosts this screen (:func:`host_watch_screen`) and routes the source's events to it as
to its own panels (:mod:`tui.routing`); :class:`WatchApp` is the screen on its own, for
tests of the screen alone.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from core.events import Error, Event, Stage, WatchRequest, WatchResponse, WatchStart
from tui.routing import Routed, handles
from tui.screens.viewer import Viewer
from tui.widgets.watch_detail import RequestDetail, stage_lines
from tui.widgets.watch_requests import RequestTable


class EventSource(Protocol):
    def run(self, emit: Callable[[Event], Any]) -> Awaitable[None]: ...


class WatchEvent(Message):
    """One event of the source, delivered on the UI's message queue."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class WatchScreen(Routed, Screen[None]):
    """Requests on the left; the selected request and the client's stages on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "body", "request body"),
        Binding("q", "app.quit", "quit"),
    ]
    DEFAULT_CSS = """
    WatchScreen #watch-status { height: 2; padding: 0 1; color: $text-muted; }
    WatchScreen #watch-main { height: 1fr; }
    WatchScreen #watch-requests { width: 3fr; border: round $primary; }
    WatchScreen #watch-side { width: 2fr; }
    WatchScreen #watch-detail { height: 2fr; border: round $primary; padding: 0 1;
                                overflow-y: auto; }
    WatchScreen #watch-stages { height: 1fr; border: round $accent; padding: 0 1;
                                overflow-y: auto; }
    """

    def __init__(self, body_of: Callable[[int], bytes | None] | None = None,
                 notify_errors: bool = True) -> None:
        super().__init__()
        self.body_of = body_of
        self.notify_errors = notify_errors  # hosted by the workbench, the app says them
        self.requests: dict[int, WatchRequest] = {}
        self.responses: dict[int, WatchResponse] = {}
        self.stages: dict[int, list[Stage]] = {}
        self.errors: list[str] = []
        self._last_request: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("starting the proxy…", id="watch-status", markup=False)
        with Horizontal(id="watch-main"):
            yield RequestTable(id="watch-requests")
            with Vertical(id="watch-side"):
                yield RequestDetail(id="watch-detail")
                stages = Static("no client compaction yet", id="watch-stages", markup=False)
                stages.border_title = "Stages (client)"
                yield stages
        yield Footer()

    # -- events ----------------------------------------------------------------------------

    def on_watch_event(self, message: WatchEvent) -> None:
        self.show(message.event)

    @handles(WatchStart, WatchRequest, Stage, WatchResponse, Error)
    def show(self, event: Event) -> None:
        """Draw one event of the watch (routed by the workbench, or posted by WatchApp)."""
        table = self.query_one(RequestTable)
        if isinstance(event, WatchStart):
            where = f" · recording {event.recording}" if event.recording else ""
            self.query_one("#watch-status", Static).update(
                f"watching {event.listen} → {event.upstream}{where}\n"
                f"point a client at it: ANTHROPIC_BASE_URL={event.listen}")
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
            if self.notify_errors:
                self.notify(event.message, severity="error")
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
        if chosen is None or chosen not in self.requests:
            return
        self.query_one(RequestDetail).show(self.requests[chosen], self.responses.get(chosen),
                                           self.stages.get(chosen, []))

    def _redraw_stages(self) -> None:
        lines: list[str] = []
        for request_id, stages in self.stages.items():
            for stage in stages:
                lines += [f"#{request_id}", *stage_lines(stage)]
        self.query_one("#watch-stages", Static).update("\n".join(lines))

    # -- actions ---------------------------------------------------------------------------

    def action_body(self) -> None:
        chosen = self.selected_id()
        if chosen is None:
            return
        raw = self.body_of(chosen) if self.body_of else None
        if raw is None:
            self.notify("that body is no longer kept (the recording has it)")
            return
        try:
            text = json.dumps(json.loads(raw), ensure_ascii=False, indent=2)
        except ValueError:
            text = raw.decode("utf-8", errors="replace")
        self.app.push_screen(Viewer(f"request #{chosen}", text, "json"))


class WatchApp(App[None]):
    """A standalone app around :class:`WatchScreen`, driving one event source."""

    TITLE = "ctxlab watch"
    CSS = """
    #viewer-box { border: round $primary; height: 1fr; }
    #viewer-note { height: 1; color: $text-muted; }
    #viewer-text { height: 1fr; }
    """

    def __init__(self, source: EventSource) -> None:
        super().__init__()
        self.source = source
        self.screen_ = WatchScreen(body_of=getattr(source, "body", None))

    def on_mount(self) -> None:
        self.push_screen(self.screen_)
        self.run_worker(self._drive(), exclusive=True, exit_on_error=False)

    async def _drive(self) -> None:
        try:
            await self.source.run(lambda event: self.screen_.post_message(WatchEvent(event)))
        except OSError as exc:
            self.exit(return_code=2, message=f"ctxlab watch: cannot listen: "
                                             f"{exc.strerror or exc}")


async def host_watch_screen(app: Any, source: Any) -> WatchScreen:
    """Push the watch screen over the workbench and route the source's events to it."""
    screen = WatchScreen(body_of=getattr(source, "body", None), notify_errors=False)
    await app.push_screen(screen)
    app.routed.append(screen)
    return screen
