"""A large text result saved in one pass: encoded, measured, hashed and written a slice at a time.

A fresh 10–50 MB tool result must be measured exactly (its JSON length is reported in the
stage event), hashed (the hash names its file and vouches for it in the manifest) and
written whole before any pointer to it is sent. Done one after another over the whole text,
that is four passes and a buffer the size of the result, and a buffer of 50 MB costs more
in fresh memory pages than encoding into it. Here the text is cut into 256 kB slices, and
each slice is encoded, counted (what JSON escaping adds), hashed and appended to a temporary
file before the next: one pass, over memory that is reused and stays in the CPU's cache.

Why not a writer thread: hashing and writing release the interpreter lock, but counting
holds it, and a thread coming back from a write waits for the lock up to the interpreter's
switch interval (5 ms) every time. Measured, the two threads were no faster than one
(docs/PERFORMANCE.md, "Compaction").

The caller renames the finished temporary file into place (:meth:`Streamed.commit`) or drops
it (:meth:`Streamed.abandon`); a kill before that leaves a temporary file the archive's sweep
removes. Until then the file stays open and locked (an :class:`~core.archive.atomic.AtomicFile`),
so another process's sweep knows its writer is alive however long the measuring in between
takes. Nothing is trusted or pointed at until the rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.archive.atomic import AtomicFile, open_atomic
from core.archive.atomic import write_all as _write_all
from core.archive.content_hash import new_hasher
from core.measure import escape_extra

SLICE = 1 << 18  # characters per slice (the fastest size measured: docs/PERFORMANCE.md)


@dataclass
class Streamed:
    """A text saved to a temporary file: the open file (whose lock says it is in use), its
    content hash and its JSON length."""

    text: str
    file: AtomicFile
    digest: str
    json_chars: int

    @property
    def tmp(self) -> str:
        return self.file.tmp

    def commit(self, target: str | Path) -> None:
        """Rename the temporary file to ``target``, then let its lock go (not durable: an
        archive file, see :mod:`core.archive.atomic`)."""
        self.file.commit(target)

    def abandon(self) -> None:
        """Remove the temporary file (nothing will use it)."""
        self.file.abandon()


def stream_to_temp(folder: Path, hint: str, text: str) -> Streamed:
    """Write ``text`` (UTF-8, lone surrogates kept) to a new temporary file in ``folder``."""
    target = folder / hint
    try:
        file = open_atomic(target, durable=False)
    except FileNotFoundError:
        folder.mkdir(parents=True, exist_ok=True)
        file = open_atomic(target, durable=False)
    hasher = new_hasher()
    extra = 0
    try:
        for start in range(0, len(text), SLICE):
            data = text[start:start + SLICE].encode("utf-8", "surrogatepass")
            extra += escape_extra(data)
            hasher.update(data)
            _write_all(file.fd, data)
    except BaseException:
        file.abandon()
        raise
    return Streamed(text, file, hasher.hexdigest(), len(text) + 2 + extra)
