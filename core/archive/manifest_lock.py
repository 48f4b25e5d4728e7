"""The manifest's cross-process lock: one descriptor kept open, ``flock`` taken per append.

Every append to the manifest log and every write to its index happens under this lock, so a
reader in another process sees whole lines and never an index covering half an append. The
lock is *taken* only for those moments; what is kept for the process's life is the open
descriptor of the lock file, so taking it costs one ``flock`` and a check that the file is
still the one at its path, instead of opening (and closing, and a general-purpose lock
library's own bookkeeping) at every flush, which was a quarter of a short turn's cost
(docs/PERFORMANCE.md, "Compaction").

What makes keeping the descriptor safe:

* ``flock`` belongs to the open file description, so two processes (each with its own
  descriptor) exclude each other exactly as before; threads of one process share the
  descriptor, so a process-wide mutex orders them first;
* a child made by ``fork`` inherits the descriptor, and with it a lock its parent may hold:
  the child never uses it, it closes its copy and opens its own (:func:`os.register_at_fork`;
  ``flock`` stays with the parent, whose descriptor still refers to the same open file);
* the descriptor is closed when its lock goes away (:func:`weakref.finalize`), so archives
  made and dropped by the hundred (tests, what-if workers) do not run out of descriptors;
* the lock file replaced at its path (removed and made again by someone) would leave this
  process locking a file nobody else does: after each ``flock`` the descriptor's inode is
  compared with the path's, and a different one is let go and the new file opened.

It is reentrant per thread, like the lock it replaces: a catch-up under an append's lock
does not take it again.
"""

from __future__ import annotations

import os
import stat
import threading
import time
import weakref
from pathlib import Path
from types import TracebackType

from filelock import Timeout

from core.harness_paths import check_harness_file, open_no_follow

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): the mutex alone orders writers
    fcntl = None  # type: ignore[assignment]  # None stands for the module Windows lacks

POLL = 0.005  # seconds between tries while another process holds the lock
_forks = [0]  # bumped in a child after fork: descriptors opened before belong to the parent


def _forked() -> None:
    _forks[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _close_fd(fd: int, fork: int) -> None:
    """Close a dropped lock's descriptor, in the process that opened it (a child closes its
    inherited copy itself, when it first takes the lock)."""
    if fork == _forks[0]:
        os.close(fd)


class ManifestLock:
    """An exclusive lock on ``path`` between processes (and threads), kept open."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._mutex = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._identity = (0, 0)  # (device, inode) of the open lock file
        self._fork = _forks[0]
        self._closer: weakref.finalize | None = None  # closes _fd if this lock is dropped

    def __enter__(self) -> ManifestLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        if self._fork != _forks[0]:  # in a child: nothing of the parent's state is its own
            self._forget_parents()
        deadline = time.monotonic() + self.timeout
        if not self._mutex.acquire(timeout=self.timeout):
            raise Timeout(str(self.path))
        try:
            if self._depth == 0:
                self._lock_file(deadline)
        except BaseException:
            self._mutex.release()
            raise
        self._depth += 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None and fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._mutex.release()

    def close(self) -> None:
        """Let the descriptor go (the lock must not be held)."""
        fd, self._fd = self._fd, None
        if self._closer is not None:
            self._closer.detach()
            self._closer = None
        if fd is not None and self._fork == _forks[0]:
            os.close(fd)

    def _forget_parents(self) -> None:
        """In a forked child: close the inherited copy of the parent's descriptor (when it is
        still that file) and start afresh; the parent's ``flock`` stays with the parent."""
        fd, self._fd = self._fd, None
        if self._closer is not None:
            self._closer.detach()
            self._closer = None
        if fd is not None:
            try:
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) == self._identity:
                    os.close(fd)
            except OSError:
                pass  # already closed by the child
        self._mutex, self._depth, self._fork = threading.RLock(), 0, _forks[0]

    def _lock_file(self, deadline: float) -> None:
        while True:
            fd = self._open()
            if fcntl is None:
                return
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise Timeout(str(self.path)) from None
                    time.sleep(POLL)
            try:
                there = self._still_there(fd)
            except BaseException:  # a link planted at the path: refused, and not left held
                fcntl.flock(fd, fcntl.LOCK_UN)
                self.close()
                raise
            if there:
                return
            fcntl.flock(fd, fcntl.LOCK_UN)  # a file replaced at the path: lock the new one
            self.close()

    def _open(self) -> int:
        if self._fd is None:
            check_harness_file(self.path)  # taken in place: never through a link
            self._fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT)
            st = os.fstat(self._fd)
            self._identity = (st.st_dev, st.st_ino)
            self._closer = weakref.finalize(self, _close_fd, self._fd, self._fork)
        return self._fd

    def _still_there(self, fd: int) -> bool:
        """Is the open lock file still the one at its path (not removed or replaced)?"""
        try:
            there = os.lstat(self.path)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(there.st_mode):
            check_harness_file(self.path)  # a link or a non-file planted: refused by name
        return self._identity == (there.st_dev, there.st_ino)
