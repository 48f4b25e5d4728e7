"""The search box (``ctrl+f``): typing narrows the History and the Stages by text, tool name
or stage kind, the count says how many match in each, Esc clears it; a long run stays
responsive because the rows are hidden, not rebuilt."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from core.events import Stage, ToolCall
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE
from tests.tui.conftest import play_to_end, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.i18n import t
from tui.nav_search import parse
from tui.widgets.conversation import Conversation, StageMark
from tui.widgets.history_window import WINDOW
from tui.widgets.item_run import ItemRun
from tui.widgets.search_box import SearchBox
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.tool_block import ToolBlock

pytestmark = pytest.mark.anyio


def test_a_query_is_a_tool_a_stage_kind_or_text() -> None:
    assert parse("tool:Read").tool("read") and not parse("tool:Read").tool("read_file")
    assert parse("stage:micro").stage("micro_compact")
    assert parse("  Server.LOG ").text("logs/server.log")
    assert parse("tool:").text("tool:")  # no name: plain text
    assert parse("").empty


def shown(app: CtxlabApp) -> list[object]:
    """What the History shows: its entries, and the items of its runs."""
    out: list[object] = []
    for widget in app.query_one(Conversation).children:
        if widget.display:
            out.extend(widget.shown if isinstance(widget, ItemRun) else [widget])
    return out


async def search(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    field = pilot.app.query_one("#search-input", Input)
    field.value = text
    await pilot.pause(0.1)


def count(app: CtxlabApp) -> str:
    return str(app.query_one("#search-count", Static).render())


async def test_search_narrows_history_and_stages_in_the_demo(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        total = len(timeline.stages)
        await pilot.press("ctrl+f")
        await pilot.pause(0.1)
        assert app.query_one(SearchBox).display
        assert app.focused is app.query_one("#search-input", Input)

        await search(pilot, "stage:snip")
        snips = [r for r in timeline.stages if r.event.stage == "snip_compact"]
        assert timeline.row_count == len(snips) == 3
        assert all(isinstance(w, StageMark) and w.event.stage == "snip_compact"
                   for w in shown(app))
        assert count(app) == t("search.count", history=3, stages=3)

        await search(pilot, "tool:READ_FILE")
        blocks = [w for w in app.query_one(Conversation).all_items()
                  if isinstance(w, ToolBlock) and w.tool_name == "read_file"]
        assert shown(app) == blocks and timeline.row_count == 0
        assert count(app) == t("search.count", history=len(blocks), stages=0)

        # plain text finds a tool call by what its result says, not only by its title
        block = next(b for b in blocks if "auth/session.py" in b.args)
        line = next(x.strip() for x in str(app.lookup_result(block.tool_use_id)).splitlines()
                    if len(x.strip()) > 12 and x.strip() not in block.args)
        await search(pilot, line)
        assert block in shown(app)

        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not app.query_one(SearchBox).display
        assert timeline.row_count == total
        # every item is still there; the History follows the run again: the newest shown
        history = app.query_one(Conversation)
        entries = list(history.window.entries)
        assert [w for w in history.children if w.display] == entries[-WINDOW:]
        assert all(run.shown == run.items for run in history.runs())  # every item again


async def test_search_narrows_a_replay(tmp_path: Path) -> None:
    source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w"))
    app = CtxlabApp(AppConfig(scenario=None, source=lambda _w: source,
                              workspace=tmp_path / "w", theme="ctxlab-dark"))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.finished)
        await pilot.pause(0.3)
        timeline = app.query_one(StageTimeline)
        kinds = [r.event.stage for r in timeline.stages]
        kind = kinds[0]
        app.action_search()  # the palette's way in
        await search(pilot, f"stage:{kind}")
        assert timeline.row_count == kinds.count(kind)
        marks = [w for w in shown(app) if isinstance(w, StageMark)]
        assert len(marks) == kinds.count(kind) == len(shown(app))
        assert count(app) == t("search.count", history=len(marks), stages=kinds.count(kind))
        assert t("search.rows", n=kinds.count(kind), total=len(kinds)) in \
            str(timeline.border_subtitle)


async def test_two_hundred_stage_rows_stay_responsive_while_typing(
        make_app: Callable[..., CtxlabApp]) -> None:
    """Each key narrows both panels without rebuilding a widget: the same widgets stay."""
    app = make_app(paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.1)
        timeline, history = app.query_one(StageTimeline), app.query_one(Conversation)
        for n in range(205):
            stage = Stage(stage=("snip_compact", "micro_compact", "fit_tool_results")[n % 3],
                          before_chars=10_000 + n, after_chars=5_000, before_messages=9,
                          after_messages=5)
            timeline.add_stage(stage)
            await history.tool_call(ToolCall(id=f"t{n}", name="read_file",
                                             input={"path": f"f{n}.py"}))
            await history.stage(stage)
        await history.flush()
        await pilot.pause(0.2)
        before = list(history.window.entries)  # the entries, shown or parked
        items = history.all_items()
        slowest = 0.0
        query = "stage:micro"
        for end in range(1, len(query) + 1):
            started = time.perf_counter()
            app.narrow_to(parse(query[:end]))
            slowest = max(slowest, time.perf_counter() - started)
        assert timeline.row_count == 68
        # hidden, never rebuilt: the search looks through every item, the parked ones too
        assert list(history.children) == list(history.window.entries) == before
        assert history.all_items() == items and len(history.items()) == 68
        assert slowest < 0.5, f"one key took {slowest:.2f}s"
