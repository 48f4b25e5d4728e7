"""A derived, rebuildable sqlite index of the manifest log, so a lookup never reads the log.

The log (:mod:`core.archive.manifest`) is the only source of truth and stays append-only;
this index is a cache of it. It holds the rows of the log's first ``offset`` bytes (whole
lines only) and a :class:`Stamp` that tells whether the log is still the file the rows came
from: its device and inode, and a hash of its first bytes and of the bytes just before
``offset``. A reader checks the stamp and reads only the log's tail past ``offset``; an index
that is missing, corrupt, built from another log or by other reading rules, or ahead of the
log is rebuilt from the log.

Why sqlite: a lookup in a workspace of 50,000 results must not parse 19 MB of JSON, and a
hand-written binary format would need its own crash safety. sqlite's journal makes each
update all-or-nothing, so a kill can only leave the index *behind* the log (the next reader
catches up), never half-written. Durability is not needed (``synchronous=OFF``): what an
operating-system crash could spoil is detected (the stamp, or sqlite's own checks) and
rebuilt from the log.

Why raw lines: a file entry is stored as the very JSON line the log holds, keyed by its
path, and decoded on lookup by the function that reads the log, so a new or renamed field
needs no change here. Pointer entries are ``(path, digest)`` rows; a line that was reported
when it was read (not JSON, outside the archive, unknown shape) is a ``problems`` row, so a
process that never reads that line still reports it. Paths and digests are stored as UTF-8
bytes with lone surrogates kept (``surrogatepass``), exactly as the log holds them.

Every write happens under the manifest's cross-process lock; reads take no lock.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from core.harness_paths import check_harness_file

INDEX = ".manifest.sqlite"
SIDECARS = ("-journal", "-wal", "-shm")  # sqlite's files beside the index, if any
SCHEMA = "1"  # bump when the tables or what a row means change
CHECK_BYTES = 4096  # hashed at the log's start and just before the covered offset
BUSY_TIMEOUT = 30.0

_TABLES = ("meta", "entries", "pointers", "problems")
_CREATE = (
    "CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 0), version TEXT NOT NULL,"
    " dev INTEGER NOT NULL, ino INTEGER NOT NULL, offset INTEGER NOT NULL,"
    " checksum BLOB NOT NULL)",
    "CREATE TABLE entries (path BLOB PRIMARY KEY, line BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE pointers (path BLOB NOT NULL, digest BLOB NOT NULL,"
    " PRIMARY KEY (path, digest)) WITHOUT ROWID",
    "CREATE TABLE problems (message TEXT NOT NULL UNIQUE)",
)


def key(text: str) -> bytes:
    """How a path or digest is stored: its UTF-8 bytes, lone surrogates kept."""
    return text.encode("utf-8", "surrogatepass")


def unkey(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


@dataclass
class Batch:
    """Rows for some whole lines of the log, in log order."""

    entries: list[tuple[bytes, bytes]] = field(default_factory=list)  # (path, raw line)
    pointers: list[tuple[bytes, bytes]] = field(default_factory=list)  # (path, digest)
    problems: list[str] = field(default_factory=list)


def read_edges(fd: int, offset: int) -> tuple[bytes, bytes]:
    """The log's first bytes and the bytes just before ``offset`` (each up to
    :data:`CHECK_BYTES`): what a :class:`Stamp` hashes."""
    head = os.pread(fd, min(offset, CHECK_BYTES), 0)
    start = max(0, offset - CHECK_BYTES)
    tail = os.pread(fd, offset - start, start) if offset > CHECK_BYTES else head
    return head, tail


@dataclass(frozen=True)
class Stamp:
    """Which log, and how much of it, an index covers."""

    dev: int
    ino: int
    offset: int  # bytes of the log covered: whole lines only
    checksum: bytes

    @classmethod
    def of(cls, fd: int, st: os.stat_result, offset: int) -> Stamp:
        """The stamp of the open log ``fd`` covered up to ``offset`` (two small reads)."""
        return cls.from_edges(st, offset, *read_edges(fd, offset))

    @classmethod
    def from_edges(cls, st: os.stat_result, offset: int, head: bytes, tail: bytes) -> Stamp:
        """The stamp from the log's first bytes (``head``, up to :data:`CHECK_BYTES`) and
        the bytes just before ``offset`` (``tail``, up to as many), however they are known."""
        digest = hashlib.sha256(head)
        if offset > CHECK_BYTES:
            digest.update(tail)
        return cls(st.st_dev, st.st_ino, offset, digest.digest())

    def matches(self, fd: int, st: os.stat_result) -> bool:
        """Is the open log still the file this stamp was taken of, at least as long?"""
        if (st.st_dev, st.st_ino) != (self.dev, self.ino) or st.st_size < self.offset:
            return False
        return Stamp.of(fd, st, self.offset) == self


class ManifestIndex:
    """One sqlite database of the log's rows, on disk beside the log.

    Where it cannot be used (a read-only workspace, a lock that cannot be taken), and for a
    short log, the rows are held in memory instead (:mod:`core.archive.manifest_memory`),
    built from the whole log, as the log was read before there was an index.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | None, version: str) -> None:
        self.conn = conn
        self.path = path
        self.version = version
        self._identity = _identity(path)

    @classmethod
    def open(cls, path: Path, rules: str) -> ManifestIndex:
        """The index at ``path`` (created empty if missing); nothing is read yet.

        Never through a link: sqlite would turn a linked file into a database (and write
        its journal beside the target), so the file and its journal names are checked
        first, and sqlite itself is told not to follow a link (``nofollow``).
        """
        for name in ("", *SIDECARS):
            if os.path.islink(f"{path}{name}"):  # (anything else that is no database:
                check_harness_file(f"{path}{name}")  # sqlite fails, the index is in memory)
        uri = f"file:{quote(os.fsencode(path))}?nofollow=1"
        conn = sqlite3.connect(uri, timeout=BUSY_TIMEOUT, isolation_level=None,
                               check_same_thread=False, uri=True)
        try:
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA journal_mode=TRUNCATE")
        except sqlite3.Error:
            conn.close()
            raise
        return cls(conn, path, f"{SCHEMA}:{rules}")

    def close(self) -> None:
        self.conn.close()

    def replaced(self) -> bool:
        """Is the file at ``path`` no longer the one this connection opened?

        Checked under the lock before each write: a process that wrote through a connection
        to a file another process had removed would leave its journal beside the new one.
        """
        return self.path is not None and _identity(self.path) != self._identity

    # -- reading ----------------------------------------------------------------------------

    def stamp(self) -> Stamp | None:
        """The stamp of a complete index built by these rules; None for anything else."""
        try:
            row = self.conn.execute("SELECT version, dev, ino, offset, checksum FROM meta"
                                    " WHERE id = 0").fetchone()
        except sqlite3.OperationalError:  # no such table: empty, or not made by ctxlab
            return None
        if row is None or row[0] != self.version:
            return None
        return Stamp(row[1], row[2], row[3], bytes(row[4]))

    def line(self, path: str) -> bytes | None:
        row = self.conn.execute("SELECT line FROM entries WHERE path = ?",
                                (key(path),)).fetchone()
        return None if row is None else row[0]

    def lines(self) -> list[bytes]:
        return [row[0] for row in self.conn.execute("SELECT line FROM entries")]

    def pointers(self, path: str) -> set[str]:
        rows = self.conn.execute("SELECT digest FROM pointers WHERE path = ?", (key(path),))
        return {unkey(row[0]) for row in rows}

    def problems(self) -> list[str]:
        return [row[0] for row in
                self.conn.execute("SELECT message FROM problems ORDER BY rowid")]

    # -- writing (under the manifest's lock) --------------------------------------------------

    def apply(self, batch: Batch, stamp: Stamp, *, reset: bool) -> None:
        """Add the rows of the lines up to ``stamp.offset``, in one transaction.

        ``reset`` first empties the index (and makes its tables anew): a rebuild is one
        transaction too, so a kill during it leaves the old index, never half of a new one.
        """
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if reset:
                for table in _TABLES:
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _CREATE:
                    conn.execute(statement)
            conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", batch.entries)
            conn.executemany("INSERT OR IGNORE INTO pointers VALUES (?, ?)", batch.pointers)
            conn.executemany("INSERT OR IGNORE INTO problems VALUES (?)",
                             [(message,) for message in batch.problems])
            conn.execute("INSERT OR REPLACE INTO meta VALUES (0, ?, ?, ?, ?, ?)",
                         (self.version, stamp.dev, stamp.ino, stamp.offset, stamp.checksum))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def remove_index(path: Path) -> None:
    """Delete an unusable index and sqlite's files beside it (a hot journal of a corrupt
    file must not be played back into the new one). Only under the manifest's lock."""
    for name in ("", *SIDECARS):
        try:
            os.unlink(f"{path}{name}")
        except FileNotFoundError:
            pass


def _identity(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
