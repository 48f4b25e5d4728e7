"""The scenes' workspace root: unique per process, of a fixed length.

Every test process used to share ``/tmp/ctxlab-scenes``, so two runs at once deleted each
other's workspaces. The root's *length* must stay fixed, though: the workspace path reaches
the system prompt and so the meter the snapshots show.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tui.cli import screenshots

FIXED_LENGTH = len("/tmp/ctxlab-scenes")  # the length every snapshot was taken with


def _root_in_child() -> str:
    code = "from tui.cli import screenshots; print(screenshots.scene_root())"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[2]).stdout.strip()


def test_two_processes_get_different_roots_of_the_same_length() -> None:
    first, second = _root_in_child(), _root_in_child()
    assert first != second
    assert len(first) == len(second) == FIXED_LENGTH


def test_the_root_is_stable_within_a_process_and_exists() -> None:
    root = screenshots.scene_root()
    assert root == screenshots.scene_root()
    assert root.is_dir() and len(str(root)) == FIXED_LENGTH
    assert screenshots.scene_app("tiny", name="probe").config.workspace.parent == root
