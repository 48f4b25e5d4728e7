"""The watch's request list: one row per request a watched client sent, filled in twice.

A row appears when the request is measured (``watch_request``) and is completed when its
answer is in (``watch_response``): the real usage, stop reason and duration. Rows are keyed
by the exchange id, so answers arriving out of order (concurrent streams) land in their row.
A cell filled in later widens its column: a column sized for the "…" a row starts with
would otherwise show ``2,`` of 2,019 and ``end_`` of end_turn.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from core.events import WatchRequest, WatchResponse
from tui.i18n import t

KEYS = ("id", "time", "purpose", "model", "msgs", "chars", "tok", "delta", "in", "cache_w",
        "cache_r", "out", "stop", "ms")


def column_label(key: str) -> str:
    """A column's header in the UI language (``#`` is no word)."""
    return "#" if key == "id" else t(f"watch.col.{key}")


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


def delta_text(event: WatchRequest) -> str:
    """``+2`` for a plain append; removed and rewritten messages only when there are some."""
    parts = [f"+{event.appended}"]
    if event.removed:
        parts.append(f"-{event.removed}")
    if event.rewritten:
        parts.append(f"~{event.rewritten}")
    return " ".join(parts)


def request_cells(event: WatchRequest) -> dict[str, str]:
    measured = event.conversation is not None or event.purpose == "count_tokens"
    return {
        "id": str(event.id), "time": event.time[11:19], "purpose": event.purpose,
        "model": event.model or event.path if measured else event.path,
        "msgs": str(event.messages) if measured else "—",
        "chars": _n(event.chars) if measured else "—",
        "tok": _n(event.est_tokens) if measured else "—",
        "delta": delta_text(event) if event.conversation else "—",
        "in": "…", "cache_w": "", "cache_r": "", "out": "", "stop": "", "ms": "",
    }


def response_cells(event: WatchResponse) -> dict[str, str]:
    usage = event.usage or {}
    failed = event.error is not None and event.stop_reason is None
    return {
        "in": _n(usage.get("input_tokens")),
        "cache_w": _n(usage.get("cache_creation_input_tokens")),
        "cache_r": _n(usage.get("cache_read_input_tokens")),
        "out": _n(usage.get("output_tokens")),
        "stop": (t("watch.stop_error", status=event.status) if failed
                 else event.stop_reason or str(event.status)),
        "ms": f"{event.duration_ms:,.0f}",
    }


class RequestTable(DataTable):
    """One row per watched request, newest at the bottom; Home and End select the first and
    the newest request (a table's own Home and End only scroll, leaving the selection)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "select_row(0)", show=False),
        Binding("end", "select_row(-1)", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.border_title = t("watch.requests")

    def on_mount(self) -> None:
        for key in KEYS:
            self.add_column(column_label(key), key=key)

    def action_select_row(self, row: int) -> None:
        if self.row_count:
            self.move_cursor(row=row % self.row_count)

    def add_request(self, event: WatchRequest) -> None:
        cells = request_cells(event)
        self.add_row(*(cells[key] for key in KEYS), key=str(event.id))
        if self.cursor_row == self.row_count - 2:  # following the newest: keep following
            self.move_cursor(row=self.row_count - 1)

    def add_response(self, event: WatchResponse) -> None:
        if str(event.id) not in self.rows:
            return
        for key, value in response_cells(event).items():
            self.update_cell(str(event.id), key, value, update_width=True)
