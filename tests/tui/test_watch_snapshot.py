"""A snapshot of the watch screen on its own, fed by the canned source of the watch scene
(:mod:`tui.watch_scene`, fixed times and sizes)."""

from __future__ import annotations

from collections.abc import Callable

from tui.screens.watch import WatchApp
from tui.watch_scene import SIZE, CannedSource, settle_watch


def test_watch_screen_snapshot(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(WatchApp(CannedSource()), terminal_size=SIZE, run_before=settle_watch)
