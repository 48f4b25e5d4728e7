"""At every terminal size from 80×24 to 240×70 (tests/tui/sizes.py), each panel is either on
screen with at least three rows of content or named with its key in the strip, and its key
brings it into view: a wide but short window (150×34, the browser's 142×34) used to push
Transcripts and Memory off the bottom of the screen with no word about them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.conftest import play_to_end
from tests.tui.panel_places import MIN_ROWS, panel_places
from tests.tui.sizes import SIZES
from tui import panels
from tui.app import CtxlabApp
from tui.cli import screenshots

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_every_panel_is_in_view_or_named_in_the_strip(
        make_app: Callable[..., CtxlabApp], width: int, height: int) -> None:
    app = make_app()
    async with app.run_test(size=(width, height)) as pilot:
        await play_to_end(pilot)
        places = panel_places(app)
        hidden = {name: place for name, place in places.items() if not place.accounted_for}
        assert not hidden, f"{width}×{height}: hidden without a word: {hidden}"
        for panel in panels.in_strip():  # each one's key brings it into view
            if places[panel.name].visible:
                continue
            await pilot.press(places[panel.name].key)
            await pilot.pause(0.05)
            place = panel_places(app)[panel.name]
            assert place.content_rows >= MIN_ROWS, f"{width}×{height}: key of {place}"


@pytest.mark.parametrize("size", [(142, 34), (200, 55)], ids=["142x34", "200x55"])
async def test_a_replays_own_panel_takes_its_room_from_the_layout(size: tuple[int, int]) -> None:
    """A replay adds its own panel (up to 15 rows) under Context, so the layout counts it
    when it picks what to show: at 142×34 it pushed Stages, Transcripts and Memory off."""
    app = screenshots.replay_scene_app(f"sweep-replay-{size[0]}x{size[1]}")
    async with app.run_test(size=size) as pilot:
        await screenshots.original_compaction(pilot)
        await pilot.pause(0.1)
        hidden = [place for place in panel_places(app).values() if not place.accounted_for]
        assert not hidden, f"{size}: hidden without a word: {hidden}"


@pytest.mark.parametrize("size", [(80, 24), (160, 36)], ids=["80x24", "160x36"])
async def test_in_a_replay_each_panels_key_shows_it_with_its_rows(size: tuple[int, int]) -> None:
    """One panel at a time means one: the replay's own panel goes with Context, but it stayed
    above Stages, Transcripts and Memory too (the panel's own ``display`` outweighed the
    layout's class), leaving Stages two rows at 80×24."""
    app = screenshots.replay_scene_app(f"sweep-keys-{size[0]}x{size[1]}")
    async with app.run_test(size=size) as pilot:
        await screenshots.original_compaction(pilot)
        assert app.mode == "one"
        for panel in panels.in_strip():
            await pilot.press(panels.keys()[panel.name])
            await pilot.pause(0.1)
            place = panel_places(app)[panel.name]
            assert place.content_rows >= MIN_ROWS, f"{size}: key of {place}"
            replay_shown = app.query_one("#replay").region.height > 0
            assert replay_shown == (panel.name == "context"), panel.name
