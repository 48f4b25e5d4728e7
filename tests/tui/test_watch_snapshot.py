"""A snapshot of the watch screen as ``ctxlab watch`` shows it: the workbench on a watch
source (the canned one of :mod:`tui.cli.watch_scene`, fixed times and sizes), the watch screen
pushed over its panels and fed through the same batched bridge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tui.cli.watch_scene import SIZE, canned_watch_app, settle_watch


def test_watch_screen_snapshot(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    assert snap_compare(canned_watch_app(tmp_path), terminal_size=SIZE,
                        run_before=settle_watch)
