"""A snapshot of the watch screen on its own, fed by the canned source of the watch scene
(:mod:`tui.watch_scene`, fixed times and sizes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui.screens.watch import WatchApp
from tui.watch_scene import SIZE, CannedSource


async def settle(pilot: Any) -> None:
    for _ in range(100):
        if pilot.app.screen.query("#watch-requests") and \
                pilot.app.screen.query_one("#watch-requests").row_count == 3:
            break
        await pilot.pause(0.02)
    await pilot.press("down", "down")
    await pilot.pause()


def test_watch_screen_snapshot(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(WatchApp(CannedSource()), terminal_size=SIZE, run_before=settle)
