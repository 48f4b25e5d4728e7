"""Pilot flows over a real scenario run: the panels follow the engine's own events."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static, TabbedContent

from core.archive.store import RESULTS_DIR, TRANSCRIPT_DIR
from core.compact.breakdown import MESSAGE_CATEGORIES
from core.measure import json_chars
from core.sources.agent.session import AgentSession
from tests.tui.conftest import play_to_end, wait_for
from tui.app import CtxlabApp
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.transcript_list import TranscriptList

pytestmark = pytest.mark.anyio


async def test_scenario_played_to_the_end_updates_every_panel(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        records = app.query_one(StageTimeline).stages
        stages = [r.event.stage for r in records]
        assert {"tool_result_budget", "snip_compact", "micro_compact", "fit_tool_results",
                "manual_compact"} <= set(stages)
        # Stages: one row per stage event, in firing order.
        timeline = app.query_one(StageTimeline)
        assert timeline.row_count == len(records)
        assert [timeline.get_row_at(i)[1] for i in range(timeline.row_count)] == stages
        # Context: one sparkline point per main call; the bar and its breakdown are, exactly,
        # the list the last call sent.
        meter = app.query_one(ContextMeter)
        assert len(meter.history) == app.calls == 10
        assert app.sent is not None and app.sent.sent is not None
        assert meter.chars == meter.history[-1] == json_chars(list(app.sent.sent))
        assert sum(meter.breakdown[k] for k in MESSAGE_CATEGORIES) == meter.chars
        # Transcripts: exactly the files on disk, transcripts and results, as events said.
        ws = tmp_path / "ws"
        on_disk = {p.relative_to(ws).as_posix() for p in (ws / TRANSCRIPT_DIR).glob("*.jsonl")}
        on_disk |= {p.relative_to(ws).as_posix() for p in (ws / RESULTS_DIR).glob("*.txt")}
        listing = app.query_one(TranscriptList)
        assert {str(k.value) for k in listing.rows} == on_disk
        assert listing.files[records[-1].event.files[0]].writer == "manual_compact"
        # Memory: the seeded record and the one the run extracted.
        table = app.query_one(MemoryCatalog).query_one(DataTable)
        keys = {str(k.value) for k in table.rows}
        assert {"indentation.md", "prefers-short-function-names.md"} <= keys
        assert app.query_one(MemoryCatalog).recalled == {"prefers-short-function-names.md"}
        # What the model sees: the agent's current list, the summary marked as such.
        await pilot.press("v")
        await pilot.pause(0.1)
        assert app.query_one(TabbedContent).active == "tab-model"
        view = app.query_one(ModelView)
        assert isinstance(app.source, AgentSession)
        assert view.messages == app.source.agent.messages[:-1]  # minus the final reply
        # its sizes are the ones the call's event carried, and exact
        assert list(view.sizes) == [json_chars(m) for m in view.messages]
        assert view.total == json_chars(view.messages)
        assert "-summary" in view.children[0].classes  # the [Compacted] message
        await pilot.press("v")


async def test_results_and_transcripts_open_in_the_viewer(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    from tui.screens.viewer import Viewer
    from tui.widgets.tool_block import ToolBlock

    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        history = app.query_one(Conversation)
        block = next(b for b in history.all_items()
                     if isinstance(b, ToolBlock) and b.tool_name == "read_file")
        history.select(block)  # stop following the end, show the block
        await pilot.pause(0.1)
        run, top = block.run, block.run.region_of(block).y
        await pilot.click(run, offset=(4, top))  # a click on the call's line opens it
        await pilot.pause(0.1)
        assert not block.collapsed
        lines = str(block.content()).splitlines()
        assert "6,000 chars" in lines[1]
        link = next(n for n, line in enumerate(lines) if line.strip() == "Open in viewer")
        await pilot.click(run, offset=(6, top + link))  # the link under the preview
        await pilot.pause(0.1)
        assert isinstance(app.screen, Viewer)
        assert app.screen.text == app.lookup_result(block.tool_use_id)
        await pilot.press("escape")
        await pilot.pause(0.1)
        listing = app.query_one(TranscriptList)
        rel = next(str(k.value) for k in listing.rows if str(k.value).endswith(".jsonl"))
        listing.post_message(TranscriptList.Open(rel))
        await pilot.pause(0.2)
        assert isinstance(app.screen, Viewer)
        first = json.loads((tmp_path / "ws" / rel).read_text().splitlines()[0])
        # Each archived message is shown readable: its text as written, not JSON-escaped.
        assert app.screen.text.startswith("// message 0\nrole: user\n" + first["content"])


async def test_paused_start_steps_one_call_and_thresholds_apply_live(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.3)
        assert app.calls == 0
        await pilot.press("s")
        await wait_for(pilot, lambda: app.calls == 1)
        await pilot.pause(0.2)
        assert app.calls == 1 and app.paused
        # Thresholds: refused with the field named, or handed to the running agent.
        await pilot.press("l")
        await pilot.pause(0.1)
        screen = app.screen
        screen.query_one("#limit-context_limit", Input).value = "0"
        await pilot.press("ctrl+s")
        await pilot.pause(0.05)
        assert "context_limit" in str(screen.query_one("#limits-error", Static).render())
        screen.query_one("#limit-context_limit", Input).value = "5000"
        await pilot.press("ctrl+s")
        await pilot.pause(0.1)
        assert app.limits().context_limit == 5000
        assert app.query_one(ContextMeter).limits.context_limit == 5000


