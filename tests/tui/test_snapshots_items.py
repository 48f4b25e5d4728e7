"""Snapshots of the Items and Diff tabs (the scenes ``python -m tui.cli.screenshots items
diff`` shoots), at a small terminal, a projector, a laptop and a wide screen."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.test_snapshots import scene
from tui.cli import screenshots

SIZES = [(80, 24), (100, 30), (160, 48), (200, 55)]
IDS = [f"{w}x{h}" for w, h in SIZES]


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_items_snapshot(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    app = scene(f"items-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.items)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_diff_snapshot(snap_compare: Callable[..., bool], size: tuple[int, int]) -> None:
    app = scene(f"diff-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.turn_diff)
