"""The Stages table at scale: its ``#`` column grows with the row numbers."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from core.events import Stage
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield StageTimeline(id="stages")


async def test_rows_past_99_show_their_whole_number():
    """At two digits, rows 100–109 all read "10"."""
    app = OneTable()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(StageTimeline)
        for _ in range(105):
            table.add_stage(Stage(stage="snip_compact", before_chars=1_000, after_chars=500,
                                  before_messages=10, after_messages=5))
        await pilot.pause()
        await pilot.pause()
        shown = ["".join(s.text for s in table.render_line(y)).split()
                 for y in range(table.size.height)]
        numbers = [words[0] for words in shown if words and words[0].isdigit()]
        assert numbers[-6:] == ["100", "101", "102", "103", "104", "105"]
        assert all("middle" in " ".join(words) for words in shown[-3:])  # the hint still fits
