"""glob ends: symlink loops, huge trees and cancelled turns cannot keep it walking."""

from __future__ import annotations

import asyncio
import glob as stdlib_glob
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import core
import core.tools.glob as glob_tool
from core.tools import ToolRunner
from core.tools.confine import workspace_root

REPO = Path(core.__file__).resolve().parents[1]

_GLOB_IN_CHILD = """
import json, sys
from pathlib import Path
from core.tools.confine import workspace_root
from core.tools.glob import glob_files
out = glob_files(workspace_root(Path(sys.argv[1])), sys.argv[2])
print(json.dumps({"content": out.content, "meta": out.meta}))
"""


def _glob_in_child(workspace: Path, pattern: str) -> dict:
    """In a child with a deadline, so a walk that never ends fails the test, not the suite."""
    proc = subprocess.run(
        [sys.executable, "-c", _GLOB_IN_CHILD, str(workspace), pattern],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_two_symlinks_to_the_workspace_do_not_make_glob_walk_forever(workspace):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "x.py").write_text("")
    (workspace / "l1").symlink_to(".")
    (workspace / "l2").symlink_to(".")
    everything = _glob_in_child(workspace, "**")
    assert everything["content"].splitlines() == ["l1", "l2", "sub", "sub/x.py"]
    assert "stopped" not in everything["meta"]
    python = _glob_in_child(workspace, "**/*.py")
    assert python["content"].splitlines() == ["sub/x.py"]
    # a literal step through a link is bounded by the pattern, so it still works
    assert _glob_in_child(workspace, "l1/sub/*.py")["content"] == "l1/sub/x.py"


def test_a_loop_deeper_in_the_tree_is_listed_not_followed(workspace):
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "up").symlink_to("../..")
    (workspace / "a" / "b" / "f.txt").write_text("")
    result = _glob_in_child(workspace, "**/*")
    assert result["content"].splitlines() == ["a", "a/b", "a/b/f.txt", "a/b/up"]


@pytest.mark.parametrize(
    "pattern",
    [
        "**",
        "**/*.py",
        "*",
        "*/",
        "**/",
        "sub/**",
        "sub/*.py",
        "sub/c.py",
        ".*",
        "*.md",
        "s?b/*",
        "[st]*/**/*.py",
        "**/deep/**/*.py",
        "missing/*.py",
        "sub",
    ],
)
def test_without_symlinks_it_matches_what_the_standard_glob_matches(workspace, pattern):
    for name in (
        "a.py",
        "b.md",
        ".hidden.py",
        "sub/c.py",
        "sub/.h/x.py",
        "sub/deep/e/f.py",
        "tests/t.py",
    ):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("")
    root = workspace_root(workspace)
    expected = sorted(set(stdlib_glob.glob(pattern, root_dir=root, recursive=True)))
    assert glob_tool.matches_inside(root, pattern) == (expected, None)


def test_the_walk_stops_at_the_match_cap_and_says_the_list_is_incomplete(run, workspace):
    for i in range(30):
        (workspace / f"f{i:02d}.txt").write_text("")
    result = glob_tool.glob_files(workspace_root(workspace), "*.txt", 200, max_matches=10)
    assert result.meta["stopped"] == "matches" and result.meta["matches"] <= 10
    assert "stopped after 10 matches" in result.content.splitlines()[-1]
    assert "incomplete" in result.content


def test_the_walk_stops_at_the_time_limit_and_says_so(workspace):
    (workspace / "a.txt").write_text("")
    result = glob_tool.glob_files(workspace_root(workspace), "**", time_limit=0)
    assert result.meta["stopped"] == "time"
    assert result.content.endswith(
        "(the search stopped after 0 s; the list is incomplete; narrow the pattern)"
    )


def test_cancelling_the_turn_stops_the_walk_in_its_thread(workspace, monkeypatch):
    for i in range(200):
        (workspace / f"d{i:03d}").mkdir()
    real_entries, real_walk = glob_tool._entries, glob_tool.walk
    finished = threading.Event()
    outcome: list[str | None] = []

    def slow_entries(root, rel):
        time.sleep(0.05)  # a slow disk: the whole walk would take 10 s
        return real_entries(root, rel)

    def watched_walk(search):
        real_walk(search)
        outcome.append(search.stopped)
        finished.set()

    monkeypatch.setattr(glob_tool, "_entries", slow_entries)
    monkeypatch.setattr(glob_tool, "walk", watched_walk)
    runner = ToolRunner(workspace)

    async def cancel_mid_walk() -> None:
        task = asyncio.create_task(runner.run("glob", {"pattern": "**"}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_walk())
    assert finished.wait(3), "the walk kept running after the turn was cancelled"
    assert outcome == ["cancelled"]
