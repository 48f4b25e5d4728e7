"""Huge files and cancelled turns: every tool answers, within a byte budget, and stops.

The big files here are sparse (``os.truncate``): gigabytes long, no disk used. Nothing in
these tests reads or allocates more than a budget; the unfixed code did (a ``MemoryError``
out of the runner, a scan through every byte to reach an ``offset``), which is why the
edit runs in a child whose address space is capped: there it fails the way a real machine
failed, instead of taking the test's memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import core
import core.tools.edit_file as edit_tool
import core.tools.read_file as read_tool
from core.tools import ToolRunner
from core.tools.confine import workspace_root

REPO = Path(core.__file__).resolve().parents[1]
GB = 1 << 30


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    path.write_bytes(head)
    os.truncate(path, size)
    return path


def bytes_read_by_this_process() -> int:
    """``rchar`` of /proc/self/io: every byte this process's threads got from ``read``."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


needs_proc_io = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="Linux /proc")

# -- edit_file on a 3 GB file -------------------------------------------------------------------

_EDIT_IN_CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))  # 2 GB: less than the file
from core.tools import ToolRunner
out = asyncio.run(ToolRunner(Path(sys.argv[1])).run(
    "edit_file", {"path": "huge.log", "old_text": "start", "new_text": "begin"}))
print(json.dumps({"content": out.content, "is_error": out.is_error, "meta": out.meta}))
"""


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="needs RLIMIT_AS")
def test_edit_file_on_a_3_gb_file_answers_with_a_refusal_not_a_memory_error(workspace):
    huge = sparse(workspace / "huge.log", 3 * GB, b"start\n")
    proc = subprocess.run(
        [sys.executable, "-c", _EDIT_IN_CHILD, str(workspace)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome = json.loads(proc.stdout)
    assert outcome["is_error"] and outcome["meta"]["error"] == "too_large"
    assert "3,221,225,472 bytes" in outcome["content"]
    assert f"{edit_tool.MAX_EDIT_BYTES:,}" in outcome["content"]
    assert huge.stat().st_size == 3 * GB and huge.read_bytes()[:6] == b"start\n"


def test_write_file_refuses_content_over_its_budget(workspace, monkeypatch):
    import core.tools.write_file as write_tool

    monkeypatch.setattr(write_tool, "MAX_WRITE_BYTES", 1000)
    runner = ToolRunner(workspace)
    out = asyncio.run(runner.run("write_file", {"path": "big.txt", "content": "x" * 1001}))
    assert out.is_error and out.meta["error"] == "too_large"
    assert not (workspace / "big.txt").exists()


@pytest.mark.parametrize("exc", [MemoryError(), OSError(5, "Input/output error"),
                                 RecursionError("maximum recursion depth exceeded"),
                                 UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid"),
                                 KeyError("x")])
def test_an_unexpected_exception_inside_a_tool_becomes_an_error_outcome(workspace, monkeypatch,
                                                                         exc):
    def broken(*_args, **_kwargs):
        raise exc

    for name in ("edit_file", "write_file"):
        monkeypatch.setattr(getattr(core.tools, name), name, broken)
    monkeypatch.setattr(read_tool, "read_file", broken)
    monkeypatch.setattr(core.tools.glob, "glob_files", broken)
    runner = ToolRunner(workspace)
    calls = {
        "read_file": {"path": "a"},
        "write_file": {"path": "a", "content": "x"},
        "edit_file": {"path": "a", "old_text": "x", "new_text": "y"},
        "glob": {"pattern": "*"},
    }
    for name, tool_input in calls.items():
        out = asyncio.run(runner.run(name, tool_input))
        assert out.is_error, name
        assert out.meta["error"] == "internal"
        assert out.content.startswith(f"Error: {name} failed unexpectedly ({type(exc).__name__}")


# -- read_file scanning to an offset --------------------------------------------------------------


@needs_proc_io
def test_read_file_stops_scanning_for_an_offset_at_its_byte_budget(workspace):
    big = sparse(workspace / "big.log", 3 * GB, b"one\ntwo\n")  # then 3 GB with no newline
    root = workspace_root(workspace)
    before = bytes_read_by_this_process()
    out = read_tool.read_file(root, "big.log", offset=5)
    read = bytes_read_by_this_process() - before

    assert read <= read_tool.SCAN_BUDGET + 2 * read_tool._CHUNK, f"read {read:,} bytes"
    assert out.is_error and out.meta["error"] == "scan_budget"
    assert out.meta["lines_found"] == 2
    assert out.meta["scanned_bytes"] == read_tool.SCAN_BUDGET
    assert f"{read_tool.SCAN_BUDGET:,} bytes" in out.content
    assert f"tail -c +{read_tool.SCAN_BUDGET + 1}" in out.content
    assert big.stat().st_size == 3 * GB


def test_a_scan_within_budget_still_reaches_its_offset(workspace):
    (workspace / "log.txt").write_bytes(b"".join(b"line %d\n" % i for i in range(1, 2001)))
    out = read_tool.read_file(workspace_root(workspace), "log.txt", limit=2, offset=1500,
                              scan_budget=64 * 1024)
    assert not out.is_error
    assert out.content.startswith("line 1500\nline 1501\n")


def test_a_set_stop_event_ends_the_scan_at_the_next_chunk(workspace):
    sparse(workspace / "big.log", 3 * GB)
    stop = threading.Event()
    stop.set()
    out = read_tool.read_file(workspace_root(workspace), "big.log", offset=2, stop=stop)
    assert out.is_error and out.meta["error"] == "cancelled"
    assert out.meta["scanned_bytes"] <= read_tool._CHUNK


def test_cancelling_the_turn_stops_a_read_file_scan_in_its_thread(workspace, monkeypatch):
    size = 3 * GB
    sparse(workspace / "big.log", size)
    monkeypatch.setattr(read_tool, "SCAN_BUDGET", 1 << 50)  # only the cancel can stop it
    real = read_tool.read_file
    started, finished = threading.Event(), threading.Event()
    seen: dict = {}

    def watched(*args, **kwargs):
        seen["stop"] = kwargs.get("stop")
        started.set()
        try:
            seen["outcome"] = real(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(read_tool, "read_file", watched)
    runner = ToolRunner(workspace)

    async def cancel_mid_scan() -> None:
        task = asyncio.create_task(runner.run("read_file", {"path": "big.log", "offset": 9}))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_scan())
    assert finished.wait(60), "the scan kept running after the turn was cancelled"
    assert seen["stop"] is not None and seen["stop"].is_set()
    outcome = seen["outcome"]
    assert outcome.meta["error"] == "cancelled"
    assert outcome.meta["scanned_bytes"] < size
