"""Snapshots of the Window tab (key 7) on a demo run and on a replay (the original above
ctxlab's), at the sizes a small terminal, a projector, a laptop and a large monitor have."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import TINY
from tui.cli import screenshots

SIZES = [(80, 24), (100, 30), (160, 48), (200, 55)]
IDS = [f"{w}x{h}" for w, h in SIZES]


async def replay_window(pilot: Pilot[Any]) -> None:
    """The replay at the original agent's own compaction, on the Window tab."""
    await screenshots.original_compaction(pilot)
    await pilot.press("7")
    await screenshots.settle(pilot)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_window_tab_snapshot(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    app = screenshots.scene_app(TINY, "ctxlab-dark", f"snapshot-window-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.window_tab)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_window_tab_snapshot_of_a_replay(snap_compare: Callable[..., bool],
                                         size: tuple[int, int]) -> None:
    app = screenshots.replay_scene_app(f"snapshot-window-replay-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=replay_window)
