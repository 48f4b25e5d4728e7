"""Keeping the manifest's index in step with its log, across processes, kills and damage.

:class:`IndexedLog` owns one process's connection to the index
(:mod:`core.archive.manifest_index`) of one log. Catching up means: check the index's stamp
against the log, read the log's tail past the offset the index covers (the whole log if the
stamp does not match), and add the rows of its whole lines to the index in one
transaction. Catch-ups that write take the manifest's cross-process lock, as appends do, so
no two processes update the index at once and the index never covers a line a writer has
not finished. The only work without the lock is the check that nothing changed, which is
what most lookups that miss need.

What goes wrong is never a reason to trust less or lose an entry, only to read more: a
corrupt index is deleted and built again from the log; an index that cannot be opened,
written or locked (a read-only workspace) is replaced, for this process, by one in memory
built from the whole log.

A short log gets no index file: below :data:`INDEX_FROM` bytes, reading it whole costs less
than creating and updating a database, a cost every short session would pay at its first
flush (docs/PERFORMANCE.md, "Archive"). Such a log is indexed in memory, and moves to an
index on disk as soon as it has grown past the threshold, or once any process has made the
index file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.archive.manifest_index import (
    CHECK_BYTES,
    SCHEMA,
    Batch,
    ManifestIndex,
    Stamp,
    read_edges,
    remove_index,
)
from core.archive.manifest_lock import ManifestLock
from core.archive.manifest_memory import MemoryIndex
from core.harness_paths import HarnessPathError, open_no_follow

INDEX_FROM = 512 << 10  # log bytes from which an index on disk pays (~1,300 results)

AnyIndex = ManifestIndex | MemoryIndex


def _read_from(fd: int, start: int, size: int) -> bytes:
    """``size`` bytes of ``fd`` from ``start`` (fewer at its end), however large."""
    chunks = []
    while size > 0:
        chunk = os.pread(fd, min(size, 1 << 30), start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class IndexedLog:
    """A log and this process's view of its index.

    ``forget`` is told which rows changed after each catch-up (``None``: maybe all of them,
    because the index was rebuilt, or another process changed it since this one did), so a
    caller can drop what it decoded from them.
    """

    def __init__(self, log: Path, index_path: Path, rules: str,
                 parse: Callable[[bytes], Batch], lock: Callable[[], ManifestLock],
                 report: Callable[[str], None], forget: Callable[[Batch | None], None]) -> None:
        self.log = log
        self.index_path = index_path
        self.rules = rules
        self.parse = parse
        self.lock = lock
        self.report = report
        self.forget = forget
        self.index: AnyIndex | None = None
        self.covered: int | None = None  # the index's offset as this process left it
        self.short = False  # indexed in memory because the log is short (not a failure)
        # (device, inode, offset, head, tail) of the log as this process last read or wrote
        # it: what the next stamp hashes, so an append needs no read back to stamp the index
        self._edges: tuple[int, int, int, bytes, bytes] | None = None

    def query(self, name: str, default: Any, *args: Any) -> Any:
        """The index's method ``name`` called with ``args``; an index that fails is rebuilt
        from the log (or, failing that too, replaced by one in memory) and asked again."""
        if self.index is None:
            return default
        try:
            return getattr(self.index, name)(*args)
        except sqlite3.Error as exc:
            self._discard(corrupt=not isinstance(exc, sqlite3.OperationalError))
        for message in self.sync(final=False)[0]:
            self.report(message)
        try:
            return getattr(self.index, name)(*args)
        except sqlite3.Error:
            self._use_memory()
        self.sync(final=False)
        return getattr(self.index, name)(*args)

    def sync(self, final: bool, held: bool = False) -> tuple[list[str], int]:
        """Bring the index up to the log's end (``held``: the caller holds the lock).

        Returns the problems of the lines read now, and, if ``final`` (the first load, when
        a trailing partial line is a torn write, not one still being written), the length
        of that partial line.
        """
        if not final and self._unchanged():
            return [], 0
        if self.short and self._wants_disk():
            self.close()  # the log grew, or another process made the index: use it
        if self.index is None and not self._wants_disk():
            self._use_memory()
            self.short = True
        if self.index is None or self.index.path is not None:
            try:
                if held:
                    return self._sync_disk(final)
                with self.lock():
                    return self._sync_disk(final)
            except HarnessPathError as exc:  # a planted link: reported (once, by the
                self.report(str(exc))  # archive's reporter), then the index is in memory
                self._use_memory()
            except (OSError, sqlite3.Error):  # read-only, unlockable, failing: in memory
                self._use_memory()
        assert self.index is not None
        return self.read_tail(self.index, final)

    def _wants_disk(self) -> bool:
        """Should this log be indexed on disk: is it long, or is its index there already?"""
        try:
            return os.stat(self.log).st_size >= INDEX_FROM or os.path.exists(self.index_path)
        except OSError:
            return os.path.exists(self.index_path)

    def _unchanged(self) -> bool:
        """Nothing to catch up with: the log ends where this process left the index, and
        nobody changed the index since (checked without the lock)."""
        if self.index is None or self.covered is None:
            return False
        try:
            st = os.stat(self.log)
            stamp = self.index.stamp()
        except (OSError, sqlite3.Error):
            return False
        return stamp is not None and stamp.offset == self.covered == st.st_size \
            and (stamp.dev, stamp.ino) == (st.st_dev, st.st_ino)

    def _sync_disk(self, final: bool) -> tuple[list[str], int]:
        """Under the lock: the index on disk, caught up; a corrupt one is built anew."""
        try:
            return self.read_tail(self._disk_index(), final)
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError:  # not a database, or a damaged one
            self.close()
            remove_index(self.index_path)
            return self.read_tail(self._disk_index(), final)

    def _disk_index(self) -> ManifestIndex:
        if self.index is not None and self.index.path is not None \
                and not self.index.replaced():
            return self.index
        self.close()
        self.index = ManifestIndex.open(self.index_path, self.rules)
        return self.index

    def _discard(self, corrupt: bool) -> None:
        """Let go of an index that failed; delete it if it is damaged (and still the file at
        its path), so the next catch-up builds it anew."""
        index = self.index
        if corrupt and index is not None and index.path is not None:
            try:
                with self.lock():
                    if not index.replaced():
                        self.close()
                        remove_index(self.index_path)
            except OSError:
                pass
        self.close()

    def _use_memory(self) -> None:
        self.close()
        self.index = MemoryIndex(f"{SCHEMA}:{self.rules}")

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
        self.index = None
        self.short = False
        self.covered = None
        self.forget(None)

    def appended(self, fd: int, st: os.stat_result, start: int, data: bytes,
                 batch: Batch) -> bool:
        """Index lines this process has just appended at ``start`` (under the lock) from
        the rows it built them from, instead of reading back and parsing what it wrote.

        Only when the index covered the log exactly up to ``start`` (so the bytes from there
        on are ``data``, these lines, and nothing else); otherwise False, and the caller
        catches up by reading. ``fd`` is the log open for reading, ``st`` its ``fstat``.
        """
        index = self.index
        end = start + len(data)
        if index is None or self.covered != start or (self.short and end >= INDEX_FROM):
            return False  # (a short log grown long moves to its index on disk: read it)
        head, tail = self._grown_edges(fd, st, start, data)
        try:
            index.apply(batch, Stamp.from_edges(st, end, head, tail), reset=False)
        except sqlite3.Error:
            self._discard(corrupt=False)
            return False
        self._edges = (st.st_dev, st.st_ino, end, head, tail)
        self.covered = end
        self.forget(batch)
        return True

    def _grown_edges(self, fd: int, st: os.stat_result, start: int,
                     data: bytes) -> tuple[bytes, bytes]:
        """The log's edges once ``data`` is appended at ``start``, from the edges known at
        ``start`` (read from ``fd`` only when this process did not know them)."""
        edges = self._edges
        end = start + len(data)
        if edges is None or edges[:3] != (st.st_dev, st.st_ino, start):
            return read_edges(fd, end)
        head, tail = edges[3], edges[4]
        if len(head) < CHECK_BYTES:  # the log was shorter than a head: it grows into it
            head = (head + data)[:CHECK_BYTES]
        return head, (tail[-CHECK_BYTES:] + data)[-CHECK_BYTES:]

    def read_tail(self, index: AnyIndex, final: bool) -> tuple[list[str], int]:
        """Index the whole lines of the log past what ``index`` covers (all of them if its
        stamp does not match this log)."""
        try:  # a log planted as a link, a FIFO or a device is never read as ours
            fd = open_no_follow(self.log, os.O_RDONLY)
        except HarnessPathError:
            raise
        except OSError:
            self.covered = 0
            return [], 0
        try:
            st = os.fstat(fd)
            stamp = index.stamp()
            reset = stamp is None or not stamp.matches(fd, st)
            start = 0 if reset or stamp is None else stamp.offset
            data = _read_from(fd, start, st.st_size - start)
            end = data.rfind(b"\n") + 1
            batch = self.parse(data[:end]) if end else Batch()
            if end or reset:
                head, tail = read_edges(fd, start + end)
                index.apply(batch, Stamp.from_edges(st, start + end, head, tail), reset=reset)
                self._edges = (st.st_dev, st.st_ino, start + end, head, tail)
        finally:
            os.close(fd)
        self.forget(None if reset or start != self.covered else batch)
        self.covered = start + end
        return batch.problems, len(data) - end if final else 0
