"""Snapshots of the Timeline tab (a Claude Code replay played to its end, the cursor on
its manual compaction) at the sizes a small terminal, a projector, a laptop and a large
monitor have, and of the watch screen with its timeline under the request list. The
scenes are the screenshot script's (:mod:`tui.cli.screenshots`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tui.cli import screenshots
from tui.cli.watch_scene import canned_watch_app, settle_watch

SIZES = [(80, 24), (100, 30), (160, 48), (200, 55)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_timeline_snapshot(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    app = screenshots.replay_scene_app(f"snapshot-timeline-{size[0]}x{size[1]}",
                                       screenshots.COMPACTING_FIXTURE)
    assert snap_compare(app, terminal_size=size, run_before=screenshots.timeline)


@pytest.mark.parametrize("size", [(100, 30), (150, 40)], ids=["100x30", "150x40"])
def test_watch_timeline_snapshot(snap_compare: Callable[..., bool],
                                 size: tuple[int, int]) -> None:
    app = canned_watch_app(screenshots.scene_root() / f"snapshot-watch-timeline-{size[0]}")
    assert snap_compare(app, terminal_size=size, run_before=settle_watch)
