"""Snapshots of the navigation views at the four sizes people use: the search box open with
its matches, and the projector theme's labelled meter marks (the scenes of
``python -m tui.cli.screenshots``, on the tiny test scenario)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.conftest import TINY
from tui.cli import screenshots

SIZES = [(80, 24), (100, 30), (160, 48), (200, 55)]
IDS = [f"{w}x{h}" for w, h in SIZES]


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_search_box_with_matches(snap_compare: Callable[..., bool],
                                 size: tuple[int, int]) -> None:
    app = screenshots.scene_app(TINY, "ctxlab-dark", f"snapshot-search-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.searching)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_projector_meter_marks(snap_compare: Callable[..., bool],
                               size: tuple[int, int]) -> None:
    app = screenshots.scene_app(TINY, "projector", f"snapshot-marks-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.mid_run)
