"""The manifest lock keeps its descriptor open between appends: it must still exclude
another process (holding it with the general-purpose lock or this one), follow a lock file
replaced at its path, never hand a child the parent's lock, and refuse a planted link."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from core.archive.manifest_lock import ManifestLock
from core.harness_paths import HarnessPathError

ROOT = Path(__file__).resolve().parents[3]

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from core.archive.manifest_lock import ManifestLock
    lock = ManifestLock(Path(sys.argv[1]), 10)
    with lock:
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def _holder(path: Path, seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_another_process_holding_it_keeps_this_one_out_until_it_lets_go(tmp_path: Path):
    path = tmp_path / ".manifest.lock"
    mine = ManifestLock(path, 0.2)
    with mine:  # the descriptor is open from here on, the lock let go after
        pass
    child = _holder(path, 1.0)
    with pytest.raises(Timeout):
        mine.acquire()
    child.wait(timeout=10)
    with mine:  # free again: taken through the descriptor kept open
        pass


def test_it_excludes_the_general_purpose_lock_on_the_same_file(tmp_path: Path):
    path = tmp_path / ".manifest.lock"
    with ManifestLock(path, 1), pytest.raises(Timeout):
        FileLock(str(path), timeout=0.1).acquire()


def test_it_is_reentrant_in_one_thread(tmp_path: Path):
    lock = ManifestLock(tmp_path / ".manifest.lock", 1)
    with lock, lock:
        pass
    with FileLock(str(tmp_path / ".manifest.lock"), timeout=0.1):
        pass  # let go entirely after the outer block


def test_a_lock_file_replaced_at_its_path_is_followed(tmp_path: Path):
    path = tmp_path / ".manifest.lock"
    mine = ManifestLock(path, 0.2)
    with mine:
        pass
    path.unlink()  # someone removes it; a new process makes a new one and holds it
    child = _holder(path, 1.0)
    with pytest.raises(Timeout):
        mine.acquire()  # not fooled by the old inode it still has open
    child.wait(timeout=10)
    with mine:
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_opens_its_own_descriptor(tmp_path: Path):
    path = tmp_path / ".manifest.lock"
    lock = ManifestLock(path, 0.3)
    with lock:
        pid = os.fork()
        if pid == 0:  # the child: the parent holds the lock through the shared descriptor
            code = 0
            try:
                lock.acquire()
                code = 1  # it must not have got it
            except Timeout:
                code = 0
            except BaseException:
                code = 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_planted_link_is_refused(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.write_text("x")
    path = tmp_path / ".manifest.lock"
    path.symlink_to(outside)
    with pytest.raises(HarnessPathError):
        ManifestLock(path, 0.1).acquire()


def test_a_link_planted_after_the_lock_was_open_is_refused_and_not_left_held(tmp_path: Path):
    """The refusal comes after ``flock`` succeeded on the old file: it is let go first, or
    every other process would wait on it until this one exits."""
    import fcntl

    path = tmp_path / ".manifest.lock"
    lock = ManifestLock(path, 0.2)
    with lock:
        pass
    old = tmp_path / "old.lock"
    os.replace(path, old)
    path.symlink_to(tmp_path / "outside")  # planted by a tool
    with pytest.raises(HarnessPathError):
        lock.acquire()
    fd = os.open(old, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if still held
    finally:
        os.close(fd)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd")
def test_archives_dropped_after_a_flush_leave_no_descriptor_open(tmp_path: Path):
    import gc

    from core.archive.store import Archive

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def one(n: int) -> None:
        archive = Archive(tmp_path / f"ws{n}")
        archive.persist("toolu_1", "x" * 500)
        archive.flush()

    one(-1)  # modules loaded, caches warm
    gc.collect()
    before = open_fds()
    for n in range(50):
        one(n)
    gc.collect()
    assert open_fds() <= before
