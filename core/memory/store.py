"""The memory store: one Markdown file per record in ``.memory/``, validated, never deleted.

A record is YAML frontmatter (``name``, ``description``, ``type``) between two lines that
are exactly ``---``, a blank line, then the body. People edit these files by hand, so:

* a file whose name does not match its slug is still a record (files get renamed);
* a file that is not a valid record is reported with a reason and left alone — never
  rewritten, never deleted, never indexed;
* every write is atomic and happens under a cross-process lock, so the agent, another
  ctxlab and an editor cannot tear each other's files;
* a new name never overwrites a *different* record: colliding slugs are disambiguated
  (``-2``, ``-3``…) and names that are paths are refused with a reason;
* a workspace can ship links (a cloned repository can): the folder is reached through
  :func:`core.harness_paths.harness_dir` before anything is written, so a ``.memory`` that
  is a link, or leads outside its workspace, is refused with one line, and ``MEMORY.md``
  and ``.lock`` are never written through a link (records are replaced by rename, which
  never follows one).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

import core.memory.journal as journal
from core.archive.atomic import fsync_dir
from core.events import Error, Event, IndexRebuilt, MemoryWritten
from core.harness_paths import check_harness_file, harness_dir
from core.memory.index import (
    INDEX_NAME,
    Scan,
    ScanCache,
    StatKey,
    index_changes,
    load_entry,
    render_index,
)
from core.memory.journal import atomic_write
from core.memory.record import (  # noqa: F401 - the format's names, re-exported
    MAX_RECORD_BYTES,
    MEMORY_TYPES,
    FrontmatterError,
    InvalidFile,
    MemoryStoreError,
    Record,
    allocate_file,
    check_file_name,
    parse_document,
    path_like_reason,
    record_from_text,
    render_document,
    slugify,
    validate_fields,
)
from core.untrusted import UntrustedFileError, read_limited

LOCK_NAME = ".lock"
MAX_INDEX_BYTES = 64 << 20  # far past any index ctxlab renders; a bigger file is rewritten

Emit = Callable[[Event], Any]

# What each folder looked like at its last index rebuild *in this process*, shared by every
# MemoryStore on that folder: the agent's store and the UI's watcher store are often two
# objects, and a write through either must not come back as a "hand edit".
_INDEXED: dict[str, dict[str, StatKey]] = {}
_INDEXED_LOCK = threading.Lock()


class MemoryStore:
    """A ``.memory`` folder: list, validate, write, delete and index its records.

    ``emit`` receives :class:`MemoryWritten` and :class:`IndexRebuilt` events. Opening a
    writable store finishes any interrupted consolidation (see :mod:`core.memory.journal`).
    ``read_only=True`` never creates, locks or repairs anything (``ctxlab memory check``).
    """

    def __init__(self, root: Path | str, emit: Emit | None = None, *,
                 read_only: bool = False) -> None:
        self.root = Path(root).absolute()
        self.read_only = read_only
        self._emit = emit
        self._cache = ScanCache(load_entry)
        self._mutex = threading.RLock()
        self._file_lock: FileLock | None = None
        if not read_only and os.path.lexists(self.root):
            self.checked_root()  # a linked .memory is refused before recovery writes to it
            self.recover()

    def checked_root(self, *, create: bool = False) -> Path:
        """The folder, once it is known to be a real folder inside its workspace (the folder
        it sits in); raises :class:`core.harness_paths.HarnessPathError` with one line."""
        return harness_dir(self.root.parent, self.root.name, create=create)

    @classmethod
    def open(cls, root: Path | str, emit: Emit | None = None) -> MemoryStore:
        """Open (recovering if needed) and bring ``MEMORY.md`` up to date (trigger startup)."""
        store = cls(root, emit)
        if store.root.is_dir():
            store.rebuild_index("startup")
        return store

    def emit(self, event: Event) -> None:
        if self._emit is not None:
            self._emit(event)

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the in-process and cross-process lock (reentrant). Creates the folder."""
        if self.read_only:
            raise MemoryStoreError("the memory store was opened read-only")
        with self._mutex:
            self.root.parent.mkdir(parents=True, exist_ok=True)  # the workspace, not ours
            self.checked_root(create=True)
            check_harness_file(self.root / LOCK_NAME)
            if self._file_lock is None:
                self._file_lock = FileLock(str(self.root / LOCK_NAME))
            with self._file_lock:
                yield

    # reading ----------------------------------------------------------------------------

    def scan(self) -> Scan:
        return self._cache.scan(self.root)

    def records(self) -> list[Record]:
        return list(self.scan().records)

    def invalid(self) -> list[InvalidFile]:
        return list(self.scan().invalid)

    def get(self, key: str) -> Record | None:
        """A record by exact name, then by file name (with or without ``.md``), then slug."""
        records = self.records()
        for match in (
            lambda r: r.name == key,
            lambda r: r.file in (key, f"{key}.md"),
            lambda r: r.file == f"{slugify(key)}.md",
        ):
            found = next((r for r in records if match(r)), None)
            if found is not None:
                return found
        return None

    @property
    def files_read(self) -> int:
        """How many files this store has parsed so far (unchanged files are cached)."""
        return self._cache.total_reads

    def index_text(self) -> str:
        return render_index(self.records())

    def pending_recovery(self) -> bool:
        return journal.pending(self.root)

    # writing ----------------------------------------------------------------------------

    def write(self, name: str, description: str, type: str, body: str,
              *, emit: Emit | None = None) -> Record:
        """Create a record, or update the record that already has exactly this ``name``.

        A different record is never overwritten: a taken file name gets a ``-N`` suffix.
        """
        validate_fields(name, description, type, body)
        document = render_document(name, description, type, body)
        if len(document.encode("utf-8")) > MAX_RECORD_BYTES:
            raise MemoryStoreError("memory record would be larger than 1 MB")
        with self.locked():
            scan = self._cache.scan(self.root)
            file = self._file_for(name, scan)
            stale = self._hard_links(file, scan)
            self._put(file, document)
            for other in stale:  # still the old bytes: left, it would be a second record
                self._guarded(other).unlink(missing_ok=True)
            event = self._rebuild_locked("write", (file, *stale))
        send = emit or self.emit
        send(MemoryWritten(file=file, name=name, record_type=type))
        send(event)
        return Record(file, name, description, type, body.strip())

    def delete(self, file: str, *, emit: Emit | None = None) -> bool:
        """Delete one record file (never the index, never outside the store).

        The record's other names (a link to it, a hard link) go too: left behind, a link
        would dangle and a hard link would bring the deleted record straight back.
        """
        check_file_name(file)
        with self.locked():
            path = self._guarded(file)
            if not path.exists() and not path.is_symlink():
                return False
            names = (file, *self._cache.scan(self.root).names_of(file))
            for name in names:
                self._guarded(name).unlink(missing_ok=True)
            fsync_dir(self.root)
            event = self._rebuild_locked("write", names)
        (emit or self.emit)(event)
        return True

    def rebuild_index(self, trigger: str = "command", changed: Sequence[str] | None = None,
                      *, notify: bool = True) -> IndexRebuilt:
        """Re-render ``MEMORY.md`` from the records (re-reading only changed files)."""
        with self.locked():
            event = self._rebuild_locked(trigger, changed)
        if notify:
            self.emit(event)
        return event

    def sync_index(self, trigger: str = "watch") -> IndexRebuilt | None:
        """Rebuild only if files changed since the last rebuild *in this process*.

        ctxlab's own writes rebuild the index as they happen, so they leave nothing to do
        here: the watcher calls this and reports hand edits only. A hand-edited
        ``MEMORY.md`` is rewritten and reported as the change.
        """
        with self.locked():
            scan = self._cache.scan(self.root)
            changed = scan.diff(self._indexed)
            if not changed and self._index_bytes() == render_index(scan.records).encode():
                return None
            return self._rebuild_locked(trigger, changed or (INDEX_NAME,), scan)

    def recover(self) -> bool:
        """Finish an interrupted consolidation; True if one was rolled forward."""
        try:
            with self.locked():
                done = journal.recover(self.root)
                if done is None:
                    return False
                changed = sorted(set(done.removed) | set(done.written))
                event = self._rebuild_locked("startup", changed)
        except journal.JournalError as exc:
            self.emit(Error(message=f"memory recovery failed: {exc}", kind="memory"))
            return False
        self.emit(event)
        return True

    # internals (call with the lock held) ------------------------------------------------

    @property
    def _indexed(self) -> dict[str, StatKey] | None:
        with _INDEXED_LOCK:
            return _INDEXED.get(os.path.realpath(self.root))

    @_indexed.setter
    def _indexed(self, keys: dict[str, StatKey]) -> None:
        with _INDEXED_LOCK:
            _INDEXED[os.path.realpath(self.root)] = keys

    def _guarded(self, file: str) -> Path:
        check_file_name(file)
        path = self.root / file
        real_root = self.root.resolve()
        if path.is_symlink() and not path.resolve().is_relative_to(real_root):
            raise MemoryStoreError(f"{file} is a symlink pointing outside the store")
        if path.resolve().parent != real_root and not path.is_symlink():
            raise MemoryStoreError(f"{file} resolves outside the store")
        return path

    def _hard_links(self, file: str, scan: Scan) -> tuple[str, ...]:
        """The other names of ``file`` that are not links: a write replaces ``file`` by
        rename, so they would keep the old bytes (a link to it keeps leading to it)."""
        return tuple(a for a in scan.names_of(file) if not os.path.islink(self.root / a))

    def _put(self, file: str, text: str) -> None:
        atomic_write(self._guarded(file), text.encode("utf-8"))

    def _file_for(self, name: str, scan: Scan) -> str:
        same = [r.file for r in scan.records if r.name == name]
        if same:
            slug_file = f"{slugify(name)}.md"
            return slug_file if slug_file in same else same[0]
        return allocate_file(name, self.taken_names())

    def taken_names(self) -> set[str]:
        """Every entry in the folder, casefolded (so ``Tabs.md`` blocks ``tabs.md``)."""
        try:
            return {n.casefold() for n in os.listdir(self.root)}
        except FileNotFoundError:
            return set()

    def _index_bytes(self) -> bytes | None:
        """The current ``MEMORY.md`` (None when missing or unreadable). A link, FIFO or
        folder planted under the name is refused (one line), never read or replaced."""
        check_harness_file(self.index_path)
        try:
            return read_limited(self.index_path, MAX_INDEX_BYTES, follow_links=False)
        except UntrustedFileError:
            return None

    def _rebuild_locked(self, trigger: str, changed: Sequence[str] | None,
                        scan: Scan | None = None) -> IndexRebuilt:
        scan = scan or self._cache.scan(self.root)
        text = render_index(scan.records).encode("utf-8")
        old = self._index_bytes()
        indexed = self._indexed
        if changed is None and indexed is not None:
            changed = scan.diff(indexed) or ((INDEX_NAME,) if old != text else ())
        elif changed is None:  # nothing scanned yet in this process: compare with the file
            changed = index_changes(None if old is None else old.decode("utf-8", "replace"),
                                    text.decode("utf-8"))
        if old != text:
            atomic_write(self.index_path, text)  # a rename: replaces, never follows
        self._indexed = dict(scan.keys)
        return IndexRebuilt(trigger=trigger, records=len(scan.records),
                            invalid=len(scan.invalid), changed=tuple(changed))
