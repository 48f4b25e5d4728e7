"""Snapshots of a replay's what-if screen at the four sizes the workbench is drawn at.

The scene is the screenshot's (:func:`tui.cli.screenshots.whatif`: the compare key, every
strategy done, the second row's facts listed) on a small replay, with the screen handed the
fixed result of ``tests/core/report/whatif_sample.py``: the picture changes when the screen
does, not when a strategy's figures move."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.test_whatif_screen import fixed  # noqa: F401 — the fixture, by name
from tui.cli import screenshots


@pytest.mark.usefixtures("sequential_uuids", "fixed")
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48), (200, 55)],
                         ids=["80x24", "100x30", "160x48", "200x55"])
def test_whatif_screen_snapshot(snap_compare: Callable[..., bool],
                                size: tuple[int, int]) -> None:
    app = screenshots.replay_scene_app(f"snapshot-whatif-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.whatif)
