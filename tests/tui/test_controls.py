"""Presenter controls: themes, quitting mid-turn, the palette, scenario restarts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.worker import WorkerState

from tests.tui.conftest import TINY, play_to_end, wait_for
from tui.app import CtxlabApp
from tui.commands import ACTIONS, CtxlabCommands
from tui.i18n import t
from tui.themes import ThemeError, load_themes, theme_from_mapping
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def test_shipped_themes_load_with_ctxlab_variables() -> None:
    themes = load_themes()
    assert {"ctxlab-dark", "ctxlab-light", "projector"} <= set(themes)
    assert themes["ctxlab-light"].dark is False
    for theme in themes.values():
        assert {"pointer", "marker", "summary", "recalled", "removed"} <= set(theme.variables)
    with pytest.raises(ThemeError, match="unknown key"):
        theme_from_mapping({"name": "x", "primary": "#fff", "colour": "red"}, "x.yaml")


async def test_theme_switches_at_runtime_and_from_the_config(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(theme="projector", paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        assert app.theme == "projector"
        assert app.get_css_variables()["background"].lower() == "#000000"
        await pilot.press("t")  # next theme, cycling the shipped ones
        await pilot.pause(0.1)
        assert app.theme == "ctxlab-dark"
        assert app.get_css_variables()["pointer"].lower() == "#56c8d8"
        await pilot.press("t")
        await pilot.pause(0.1)
        assert app.theme == "ctxlab-light"
        assert app.get_css_variables()["pointer"].lower() == "#00796b"


async def test_quitting_while_a_turn_runs_exits_cleanly(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(speed=4.0)  # slow enough that the turn is still running
    async with app.run_test(size=(200, 55)) as pilot:
        await wait_for(pilot, lambda: app.calls >= 2)
        worker = next(w for w in app.workers if w.group == "agent")
        assert worker.is_running and not app.finished
        await pilot.press("ctrl+q")
        await pilot.pause(0.1)
    assert worker.state == WorkerState.CANCELLED
    assert app.return_value == 0


async def test_palette_lists_every_action_the_run_offers(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        provider = CtxlabCommands(app.screen)
        titles = [title for title, _, _ in provider.entries()]
        offered = [t(key) for key, _, _ in ACTIONS]
        assert offered == titles[: len(offered)]  # a scripted run can go back too
        assert "Theme: projector" in titles
        hits = [hit async for hit in provider.search("pause")]
        assert hits and hits[0].text == "Play / pause"
        for _, action, _ in ACTIONS:
            assert hasattr(app, f"action_{action}"), action


async def test_picking_a_scenario_restarts_in_a_fresh_temporary_workspace(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        first = app.workspace
        app.config.paused = False
        await app.start_run(TINY, None)
        await pilot.pause(0.05)
        assert app.workspace != first and app.workspace in app.temp_workspaces
        assert not str(app.workspace).startswith(str(tmp_path))
        await play_to_end(pilot)
        assert app.calls == 10  # counted afresh
        assert len(app.query_one(StageTimeline).stages) == app.query_one(StageTimeline).row_count
        temp = app.workspace
    assert not temp.exists()  # temporary workspaces go away with the app
