"""The manifest's index held in plain dicts: for a short log, and where no file can be written.

:class:`~core.archive.manifest_index.ManifestIndex` keeps the log's rows in sqlite so that a
long log is never read whole. A short log (below :data:`core.archive.manifest_sync.INDEX_FROM`)
and a read-only workspace are indexed in memory instead, and there sqlite bought nothing: a
database in memory is as lost at exit as a dict, and filling it cost a dozen statements per
flush, the larger part of a one-file ``prepare()``. This class answers the same questions
with the same meaning (the last entry line of a path wins, pointers and problems are sets
in log order) and never fails, so :class:`~core.archive.manifest_sync.IndexedLog` needs no
case of its own for it.
"""

from __future__ import annotations

from core.archive.manifest_index import Batch, Stamp, unkey


class MemoryIndex:
    """The rows of a log's first ``stamp.offset`` bytes, in this process's memory."""

    path = None  # never a file: nothing to lock, replace or remove

    def __init__(self, version: str) -> None:
        self.version = version
        self._stamp: Stamp | None = None
        self._lines: dict[str, bytes] = {}
        self._pointers: dict[str, set[str]] = {}
        self._problems: dict[str, None] = {}  # ordered, each message once

    def close(self) -> None:
        """Nothing to let go of (the rows are dropped with the object)."""

    def replaced(self) -> bool:
        return False

    def stamp(self) -> Stamp | None:
        return self._stamp

    def line(self, path: str) -> bytes | None:
        return self._lines.get(path)

    def lines(self) -> list[bytes]:
        return list(self._lines.values())

    def pointers(self, path: str) -> set[str]:
        return set(self._pointers.get(path, ()))

    def problems(self) -> list[str]:
        return list(self._problems)

    def apply(self, batch: Batch, stamp: Stamp, *, reset: bool) -> None:
        """Add the rows of the lines up to ``stamp.offset`` (``reset``: all rows anew)."""
        if reset:
            self._lines.clear()
            self._pointers.clear()
            self._problems.clear()
        for path, line in batch.entries:
            self._lines[unkey(path)] = line
        for path, digest in batch.pointers:
            self._pointers.setdefault(unkey(path), set()).add(unkey(digest))
        self._problems.update(dict.fromkeys(batch.problems))
        self._stamp = stamp
