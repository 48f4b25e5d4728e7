"""The stale-temp sweep removes only temp files that are provably abandoned.

A writer in another PID namespace (a container on the same volume) names its temp file
with a pid this process cannot see; judging it by ``kill(pid, 0)`` deleted its file while it
was still writing. A writer now holds a lock on its temp file, and the sweep leaves a locked
file alone however old it looks and whatever pid its name carries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from core.archive.atomic import STALE_AFTER, sweep_stale_temp
from core.archive.store import Archive

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b"half of a result")
print("locked", flush=True)
sys.stdin.read()
"""


def unused_pid() -> int:
    """A pid no process here has (the writer's pid in its own namespace, seen from ours)."""
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_live_writer_whose_pid_is_not_ours_to_see_keeps_its_temp_file(tmp_path):
    tmp = tmp_path / f".result-x.txt.{unused_pid()}.0.tmp"
    writer = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "locked"
        age(tmp, 10 * STALE_AFTER)  # a long write: older than any age threshold
        assert sweep_stale_temp(tmp_path) == []
        assert tmp.read_bytes() == b"half of a result"
    finally:
        writer.communicate("")
    # its writer gone, the lock is free: now it is abandoned
    assert sweep_stale_temp(tmp_path) == [tmp.name]
    assert not tmp.exists()


def test_an_unlocked_temp_file_is_swept_only_once_it_is_old(tmp_path):
    fresh = tmp_path / f".a.txt.{unused_pid()}.0.tmp"  # a writer about to lock it, perhaps
    fresh.write_text("x")
    old = tmp_path / f".b.txt.{unused_pid()}.1.tmp"
    old.write_text("x")
    age(old, STALE_AFTER + 5)
    assert sweep_stale_temp(tmp_path) == [old.name]
    assert fresh.exists()


def test_a_large_result_saved_early_is_not_swept_by_another_archive(tmp_path):
    """``begin_persist`` writes a large result to a temp file that waits, closed in the
    old code, for ``persist`` to name it; another process's archive opening meanwhile must
    leave it, even when the wait is long."""
    first = Archive(tmp_path)
    text = "y" * 2_000_000
    first.begin_persist("toolu_big", text)
    (waiting,) = [p for p in first.results_dir.iterdir() if p.name.endswith(".tmp")]
    age(waiting, 10 * STALE_AFTER)
    Archive(tmp_path).persist("toolu_other", "a small result")
    assert waiting.exists()
    rel = first.persist("toolu_big", text)
    assert (tmp_path / rel).read_text() == text
