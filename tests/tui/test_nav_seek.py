"""Going back in ctxlab's own scripted demo: step back, go to a request, and a live run that
cannot (issue 26, navigation)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from core.sources import Capability
from tests.tui.conftest import play_to_end, wait_for
from tui.app import CtxlabApp
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def panels_at(app: CtxlabApp) -> tuple[Any, ...]:
    """What the panels show: the stage rows, the history's items, the meter, the calls."""
    timeline = app.query_one(StageTimeline)
    rows = [tuple(str(c) for c in timeline.get_row_at(i)) for i in range(timeline.row_count)]
    history = [str(w.render()) if isinstance(w, Static) else type(w).__name__
               for w in app.query_one(Conversation).children] + \
        [item.plain() for item in app.query_one(Conversation).all_items()]
    meter = app.query_one(ContextMeter)
    return rows, history, meter.chars, app.calls


async def settled(app: CtxlabApp, pilot: Any, calls: int) -> None:
    """Until the source holds, paused, after ``calls`` requests, and that is drawn."""
    await wait_for(pilot, lambda: app.source is not None and not app.source.seeking
                   and app.source.position == calls and app.calls == calls)
    await pilot.pause(0.3)


async def straight_to(make_app: Callable[..., CtxlabApp], calls: int,
                      where: Path) -> tuple[Any, ...]:
    app = make_app(paused=True, workspace=where)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        for _ in range(calls):
            await pilot.press("s")
        await settled(app, pilot, calls)
        return panels_at(app)


async def test_the_demo_steps_back_and_forward_to_the_panels_of_a_straight_run(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    expected_two = await straight_to(make_app, 2, tmp_path / "two")
    expected_four = await straight_to(make_app, 4, tmp_path / "four")
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        assert app.source is not None and app.source.offers(Capability.SEEK)
        for _ in range(4):
            await pilot.press("s")
        await settled(app, pilot, 4)
        await pilot.press("S", "S")  # two back: request 2
        await settled(app, pilot, 2)
        assert app.paused and panels_at(app) == expected_two
        await pilot.press("s", "s")  # and forward again
        await settled(app, pilot, 4)
        assert panels_at(app) == expected_four


async def test_go_to_a_request_in_the_demo_back_and_after_the_end(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    expected = await straight_to(make_app, 3, tmp_path / "three")
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        keys = {b.binding.key for b in app.active_bindings.values() if b.enabled}
        assert {"S", "g"} <= keys  # a finished demo can still go back
        await pilot.press("g")
        await pilot.pause(0.1)
        app.screen.query_one("#goto-input", Input).value = "3"
        await pilot.press("enter")
        await settled(app, pilot, 3)
        assert app.paused and not app.finished and panels_at(app) == expected


async def test_a_live_run_cannot_go_back_and_says_so(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=None)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        assert app.source is not None and not app.source.offers(Capability.SEEK)
        keys = {b.binding.key for b in app.active_bindings.values() if b.enabled}
        assert "S" not in keys and "g" not in keys
        await pilot.press("escape")  # the prompt lets go of the keyboard
        await pilot.press("S")
        await pilot.pause(0.1)
        assert any("cannot go back" in str(n.message) for n in app._notifications)


async def test_the_watch_request_list_navigates_and_everything_follows(tmp_path: Path) -> None:
    """↑/↓, Home/End and ``g`` move the selection; the detail shows that request and the
    stages pane marks that request's stages."""
    from tui.cli.watch_scene import canned_watch_app, settle_watch
    from tui.screens.watch import WatchScreen
    from tui.widgets.watch_detail import RequestDetail, detail_text
    from tui.widgets.watch_requests import RequestTable

    app = canned_watch_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle_watch(pilot)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        table = screen.query_one(RequestTable)
        table.focus()
        stages = screen.query_one("#watch-stages", Static)
        await pilot.press("home")
        await pilot.pause(0.1)
        assert screen.selected_id() == 1
        assert "▶" not in str(stages.render()) and stages.border_subtitle == "#1: 0 stages"
        await pilot.press("end")
        await pilot.pause(0.1)
        assert screen.selected_id() == 3 and "▶ #3" in str(stages.render())
        await pilot.press("up")
        await pilot.press("g")
        await pilot.pause(0.1)
        app.screen.query_one("#goto-input", Input).value = "3"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert screen.selected_id() == 3
        detail = str(screen.query_one(RequestDetail).render())
        assert detail == detail_text(screen.requests[3], screen.responses.get(3),
                                     screen.stages.get(3, []))
        await pilot.press("g")
        await pilot.pause(0.1)
        app.screen.query_one("#goto-input", Input).value = "9"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert screen.selected_id() == 3
        assert any("no request #9" in str(n.message) for n in app._notifications)


async def test_going_back_never_empties_a_workspace_the_person_gave(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    """Going back regenerates the scenario's workspace; one someone named may hold their
    edits (a memory written by hand), so the run starts again in a fresh one instead."""
    given = tmp_path / "mine"
    app = make_app(paused=True, workspace=given)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        for _ in range(3):
            await pilot.press("s")
        await settled(app, pilot, 3)
        note = given / "my-notes.md"
        note.write_text("mine, written during the run\n", encoding="utf-8")
        await pilot.press("S")
        await settled(app, pilot, 2)
        assert note.read_text(encoding="utf-8") == "mine, written during the run\n"
        assert app.workspace != given.resolve() and app.paused
