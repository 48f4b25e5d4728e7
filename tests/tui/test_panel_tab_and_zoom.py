"""Tab reaches every panel in every layout, bringing the ones out of view into view (below
140 columns it used to skip them: a hidden panel takes no focus), and ``z`` maximises
whichever panel has the focus — Context and Stages kept their own height when maximised."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.conftest import play_to_end
from tests.tui.panel_places import MIN_ROWS, panel_places
from tui import panels
from tui.app import CtxlabApp
from tui.app_panels import PanelStrip

pytestmark = pytest.mark.anyio

STRIP = [panel.name for panel in panels.in_strip()]


def holding_focus(app: CtxlabApp) -> str | None:
    """The strip panel the focused widget sits in."""
    panel = app.focused_panel()
    return next((name for name in STRIP if panel is app.panel_widget(name)), None)


@pytest.mark.parametrize("size", [(100, 30), (150, 34)], ids=["narrow", "short"])
async def test_tab_and_shift_tab_walk_every_panel_showing_each(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        assert app.mode != "all"
        await pilot.press("1")
        await pilot.pause(0.05)
        reached: list[str] = []
        for _ in range(8):  # the tabs, History, then the four panels
            if reached == STRIP:
                break
            await pilot.press("tab")
            await pilot.pause(0.05)
            name = holding_focus(app)
            if name is not None and name not in reached:
                reached.append(name)
                place = panel_places(app)[name]
                assert place.content_rows >= MIN_ROWS, place  # shown, not just focused
                assert name in app.query_one(PanelStrip).shown  # the strip follows
        assert reached == STRIP
        await pilot.press("shift+tab")
        await pilot.pause(0.05)
        assert holding_focus(app) == STRIP[-2]
        assert panel_places(app)[STRIP[-2]].content_rows >= MIN_ROWS


@pytest.mark.parametrize("size", [(200, 55), (150, 34)], ids=["wide", "short"])
async def test_z_maximises_the_focused_panel_whichever_it_is(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        for name, key in panels.keys().items():
            await pilot.press(key)
            await pilot.pause(0.05)
            await pilot.press("z")
            await pilot.pause(0.05)
            maximised = app.screen.maximized
            assert maximised is app.panel_widget(name), name
            assert maximised.region.height >= size[1] - 2, name  # the screen, not its place
            await pilot.press("z")
            await pilot.pause(0.05)
            assert app.screen.maximized is None
