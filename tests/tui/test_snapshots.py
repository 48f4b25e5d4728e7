"""Snapshot tests of the main screen (in English and Chinese, and at the sizes a laptop, a
projector and a small terminal have), the inspector, the editor and the welcome card.

The scenes are the ones ``python -m tui.cli.screenshots`` uses (on the tiny test scenario, so the
pictures depend on this suite only): fixed theme, fixed size, a fixed workspace path,
numbered transcript names, no blinking cursor, no toasts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import TINY, TINY_ZH
from tui.cli import screenshots

SIZE = screenshots.SIZE


def scene(name: str, theme: str = "ctxlab-dark") -> Any:
    return screenshots.scene_app(TINY, theme, f"snapshot-{name}")


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize(("name", "play"), [
    ("main", screenshots.mid_run),
    ("inspector", screenshots.inspector),
    ("editor", screenshots.editor),
])
def test_screen_snapshot(snap_compare: Callable[..., bool], name: str,
                         play: Callable[[Pilot[Any]], Any]) -> None:
    assert snap_compare(scene(name), terminal_size=SIZE, run_before=play)


@pytest.mark.usefixtures("sequential_uuids")
def test_main_screen_snapshot_in_chinese(snap_compare: Callable[..., bool]) -> None:
    """CJK text in every panel: DataTable columns and the meter's labels must stay aligned."""
    app = screenshots.scene_app(TINY_ZH, "ctxlab-dark", "snapshot-main-zh", lang="zh")
    assert snap_compare(app, terminal_size=SIZE, run_before=screenshots.mid_run)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)],
                         ids=["80x24", "100x30", "160x48"])
def test_main_screen_snapshot_at_smaller_sizes(snap_compare: Callable[..., bool],
                                               size: tuple[int, int]) -> None:
    """Below 140 columns one right panel at a time under the strip; never a cut header."""
    app = scene(f"main-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.mid_run)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", [(80, 24), (200, 55)], ids=["80x24", "200x55"])
def test_inspector_snapshot_at_both_ends(snap_compare: Callable[..., bool],
                                                      size: tuple[int, int]) -> None:
    app = scene(f"inspector-{size[0]}x{size[1]}")
    assert snap_compare(app, terminal_size=size, run_before=screenshots.inspector)


@pytest.mark.usefixtures("sequential_uuids")
@pytest.mark.parametrize("size", [(80, 24), (200, 55)], ids=["80x24", "200x55"])
def test_welcome_card_snapshot(snap_compare: Callable[..., bool],
                               size: tuple[int, int]) -> None:
    app = scene(f"welcome-{size[0]}x{size[1]}")
    app.config.welcome = True
    assert snap_compare(app, terminal_size=size, run_before=screenshots.settle)


def test_replay_snapshot_with_the_original_agents_compaction(
        snap_compare: Callable[..., bool]) -> None:
    """A Claude Code session in the workbench, at its own auto-compact: the row
    ``claude-code: auto_compact`` beside ctxlab's stages, the Replay panel with the
    original's categories, and the meter's recorded-usage line and ctxlab's own breakdown."""
    assert snap_compare(screenshots.replay_scene_app("snapshot-replay"), terminal_size=SIZE,
                        run_before=screenshots.original_compaction)
