"""Every panel is one key away; History is one Tab stop with an item cursor; the inspector
steps between stages and opens with the ledger focused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, TabbedContent

from tests.tui.conftest import play_to_end
from tui import panels
from tui.app import CtxlabApp
from tui.commands import CtxlabCommands
from tui.screens.inspector import Inspector
from tui.screens.viewer import Viewer
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation, StageMark
from tui.widgets.items_panel import ItemsTable
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.timeline import TimelinePanel
from tui.widgets.tool_block import ToolBlock
from tui.widgets.transcript_list import TranscriptList
from tui.widgets.turn_diff_panel import TurnDiffPanel
from tui.widgets.window_view import WindowView

pytestmark = pytest.mark.anyio


async def test_each_panel_has_a_key_and_a_palette_entry(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        keys = panels.keys()
        expected = {"1": Conversation, "2": ModelView, "3": ContextMeter, "4": StageTimeline,
                    "5": TranscriptList, "6": DataTable, "7": WindowView,
                    keys["items"]: ItemsTable, keys["diff"]: TurnDiffPanel}
        for key, kind in expected.items():
            await pilot.press(key)
            await pilot.pause(0.1)
            assert isinstance(app.focused, kind), key
            if key == "6":
                assert app.focused.parent is app.query_one(MemoryCatalog)
        await pilot.press(panels.keys()["timeline"])
        await pilot.pause(0.1)
        assert isinstance(app.focused, TimelinePanel)
        titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
        assert sum(title.startswith("Go to") for title in titles) == len(panels.keyed())
        assert "Maximise the focused panel" in titles and "Copy workspace path" in titles


async def test_tool_calls_are_not_tab_stops_and_arrows_walk_the_history(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        conversation = app.query_one(Conversation)
        conversation.focus()
        await pilot.pause(0.05)
        stops = []
        for _ in range(12):  # Tab from History reaches the other panels quickly
            await pilot.press("tab")
            stops.append(app.focused)
        assert not any(isinstance(w, ToolBlock) or (w and isinstance(w.parent, ToolBlock))
                       for w in stops)
        assert any(isinstance(w, StageTimeline) for w in stops[:4])
        # ↑/↓ select items; Enter opens a tool call, and on a stage mark the inspector.
        conversation.focus()
        await pilot.press("up")
        items = conversation.items()
        assert conversation.item_cursor is items[-1]
        block = next(w for w in reversed(items) if isinstance(w, ToolBlock))
        while conversation.item_cursor is not block:
            await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert not block.collapsed
        mark = next(w for w in reversed(items) if isinstance(w, StageMark))
        while conversation.item_cursor is not mark:
            await pilot.press("up" if items.index(conversation.item_cursor) >
                              items.index(mark) else "down")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Inspector)
        assert app.screen.record.event is mark.event


async def test_enter_in_the_model_view_opens_a_message_at_once(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        await pilot.press("2")
        await pilot.pause(0.2)
        assert app.query_one(TabbedContent).active == "tab-model"
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Viewer)


async def test_inspector_steps_between_stages_and_opens_on_the_ledger(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        timeline.focus()
        timeline.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, Inspector) and screen.record.index == 1
        assert app.focused is screen.query_one("#inspector-ledger")
        await pilot.press("n")
        await pilot.pause(0.3)
        assert isinstance(app.screen, Inspector) and app.screen.record.index == 2
        await pilot.press("p")
        await pilot.pause(0.3)
        assert app.screen.record.index == 1
        await pilot.press("p")  # no stage before the first: stays, says so
        await pilot.pause(0.1)
        assert app.screen.record.index == 1
        why = str(app.screen.query_one("#inspector-why").query_one(Static).render())
        assert "why it fired" in why and "thresholds in force" in why
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, Inspector)


async def test_stage_export_writes_markdown_and_svg(make_app: Callable[..., CtxlabApp],
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "slides"
    out.mkdir()
    monkeypatch.chdir(out)
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        record = next(r for r in app.query_one(StageTimeline).stages
                      if r.event.stage == "snip_compact")
        app.open_inspector(record)
        await pilot.pause(0.3)
        await pilot.press("m")
        await pilot.press("g")
        await pilot.pause(0.3)
    md = out / f"ctxlab-stage-{record.index}-snip_compact.md"
    text = md.read_text()
    assert text.startswith(f"# Stage #{record.index} · `snip_compact`")
    assert "**Why it fired.**" in text and "messages >" in text
    assert "## Before" in text and "## After" in text and "removed" in text
    assert "\\n" not in text.split("## Before")[1].split("## Ledger")[0]  # readable, not JSON
    assert (out / f"ctxlab-stage-{record.index}-snip_compact.svg").read_text().startswith("<svg")
