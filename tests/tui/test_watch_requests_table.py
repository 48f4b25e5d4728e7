"""The watch's request table shows a response's numbers whole, however narrow the row began."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from core.events import WatchRequest, WatchResponse
from tui.widgets.watch_requests import RequestTable

pytestmark = pytest.mark.anyio


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RequestTable(id="requests")


async def test_cells_filled_in_later_widen_their_columns():
    app = TableApp()
    async with app.run_test(size=(160, 8)) as pilot:
        table = app.query_one(RequestTable)
        table.add_request(WatchRequest(
            id=7, method="POST", path="/v1/messages", time="2026-12-05T01:39:56.035+00:00",
            model="claude-opus-4-8", purpose="main", conversation="c1", messages=4,
            chars=7516, est_tokens=29_000, appended=2))
        await pilot.pause()
        table.add_response(WatchResponse(
            id=7, status=200, stop_reason="end_turn", duration_ms=12_345.0,
            usage={"input_tokens": 2019, "cache_creation_input_tokens": 123_456,
                   "cache_read_input_tokens": 0, "output_tokens": 48}))
        await pilot.pause()
        row = table.render_line(1).text
        for shown in ("2,019", "123,456", "end_turn", "12,345", "7,516"):
            assert shown in row, f"{shown!r} cut in {row!r}"
