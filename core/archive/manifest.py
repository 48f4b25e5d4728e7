"""The archive's manifest: an append-only log of what ctxlab itself wrote, shared by processes.

``.task_outputs/tool-results/manifest.jsonl`` holds one JSON object per line, of two kinds:

* a file entry — ``{"path", "tool_use_id", "chars", "blake3", "format"}`` — for each result
  file or transcript ctxlab wrote (``format`` is ``text``, ``json`` or ``transcript``; lines
  written before BLAKE3 carry ``"sha256"`` instead, see :mod:`core.archive.content_hash`);
* a pointer entry — ``{"path", "pointer"}`` — the sha256 of a ``<persisted-output>`` wrapper
  ctxlab put into a history for that file. Only such exact texts are ever trusted, and a
  wrapper only when it can also be rebuilt from its file (:mod:`core.archive.rebuild`):
  anyone who can write the workspace can append a line here.

How a line is spelt and how a line anyone wrote is read: :mod:`core.archive.manifest_lines`.

Why a log: several processes (a workbench and a headless run, two ``ctxlab compact``) may
share one workspace. Each appends its lines under a cross-process lock
(:mod:`core.archive.manifest_lock`) in one ``write``, so no process can drop another's
entries (rewriting the whole file did).
A line cut off by a kill is at most the last one; it is skipped and reported, and the next
append starts on a fresh line. A manifest from before this format (``manifest.json``, one
object rewritten whole) is still read; its entries are marked ``legacy``.

Why an index: a long-lived workspace's log holds 100,000 lines and more, and parsing it
whole at the first lookup of every process was a pause a user could see
(docs/PERFORMANCE.md, "Archive"). Lookups go to a derived sqlite index of the log
(:mod:`core.archive.manifest_index`) that covers the log up to an offset; each process reads
only the log's tail past it, and writes it into the index under the same lock as appends
(:mod:`core.archive.manifest_sync`). The log stays the source of truth: an index that is
missing, corrupt, stale or ahead of the log is rebuilt from it, and where no index can be
written (a read-only workspace) one is built in memory from the whole log, as before there
was an index. Lookups already answered are kept until the log is read again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from filelock import Timeout

from core.archive.atomic import write_all
from core.archive.manifest_index import INDEX, Batch, key, unkey
from core.archive.manifest_lines import (
    MANIFEST,
    Persisted,
    entry_line,
    entry_of,
    line_value,
    parse,
    pointer_line,
    rules_fingerprint,
    sha256_text,
)
from core.archive.manifest_lock import ManifestLock
from core.archive.manifest_sync import IndexedLog
from core.harness_paths import check_harness_file, open_no_follow
from core.untrusted import UntrustedFileError, parse_json, read_limited

__all__ = ["LEGACY_MANIFEST", "LOCK", "MANIFEST", "Manifest", "Persisted", "entry_line",
           "sha256_text"]

LEGACY_MANIFEST = "manifest.json"
LOCK = ".manifest.lock"
LOCK_TIMEOUT = 30.0
LEGACY_MAX_BYTES = 256 << 20  # far more than any manifest.json an older ctxlab wrote
_RULES = rules_fingerprint()


class Manifest:
    """The manifest of one archive folder: looked up through its index, appended in batches.

    Nothing is read when it is made; the first lookup reads ``manifest.json`` (if any) and
    the log's tail past what the index covers.
    """

    def __init__(self, folder: Path, report: Callable[[str], None],
                 accept: Callable[[str], bool] = lambda path: True,
                 folder_ok: Callable[[bool], object] | None = None) -> None:
        self.folder = folder
        # Checks the folder before it is read (False) or written (True, creating it): the
        # archive passes one that refuses a folder reached through a link.
        def make_folder(create: bool) -> None:
            if create:
                folder.mkdir(parents=True, exist_ok=True)

        self.folder_ok = folder_ok or make_folder
        self.file = folder / MANIFEST
        self.report = report
        self.accept = accept  # which paths an entry may name (the log is writable by anyone)
        self._legacy: dict[str, Persisted] | None = None  # None: nothing read yet
        self._log = IndexedLog(self.file, folder / INDEX, _RULES,
                               lambda data: parse(data, self.accept), self._locked,
                               report, self._forget)
        # Decoded lookups, None for a miss, as of the index this process last caught up
        # with: forgotten when lines read later touch their path (all of them when another
        # process changed the index meanwhile), as an in-memory copy of the log would be.
        self._found: dict[str, Persisted | None] = {}
        self._pointer_sets: dict[str, set[str]] = {}
        self._added: dict[str, Persisted] = {}  # added here, not yet indexed
        self._added_pointers: dict[str, set[str]] = {}
        # their lines, not yet in the log: (line, path, pointer digest or None)
        self._pending: list[tuple[str, str, str | None]] = []
        self._lock: ManifestLock | None = None

    # -- reading ----------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, Persisted]:
        """Every entry, ``manifest.json``'s overridden by the log's: all rows are read."""
        self._load()
        assert self._legacy is not None
        found = dict(self._legacy)
        lines = self._log.query("lines", [])
        try:  # every stored line is whole JSON: one parse of them all
            values = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
        except (ValueError, RecursionError):  # a forged row: each line on its own
            values = None
        if values is None or len(values) != len(lines):
            values = [line_value(line) for line in lines]
        accept = self.accept
        for value in values:
            entry = entry_of(value)
            if entry is not None and accept(entry.path):
                found[entry.path] = entry
        found.update(self._added)
        return found

    def get(self, path: str, *, others: bool = True) -> Persisted | None:
        """The entry for ``path``; if unknown and ``others``, also looking at the lines other
        processes appended since (one read of the log's new end)."""
        self._load()
        found = self._added.get(path) or self._lookup(path)
        if found is None and others and self.file.exists():
            for message in self._log.sync(final=False)[0]:
                self.report(message)
            found = self._lookup(path)
        if found is None:
            assert self._legacy is not None
            found = self._legacy.get(path)
        return found

    def pointers(self, path: str) -> set[str]:
        """Digests of the wrapper texts ctxlab recorded for ``path``."""
        self._load()
        known = self._pointer_sets.get(path)
        if known is None:
            known = self._pointer_sets[path] = self._log.query("pointers", set(), path)
        added = self._added_pointers.get(path)
        return known | added if added else known

    def is_legacy(self, path: str) -> bool:
        """Is ``path`` known only from ``manifest.json`` (the log has no entry for it)?"""
        self._load()
        assert self._legacy is not None
        return path in self._legacy and path not in self._added and self._lookup(path) is None

    def _lookup(self, path: str) -> Persisted | None:
        if path in self._found:
            return self._found[path]
        line = self._log.query("line", None, path)
        found = None if line is None else self._decode(line)
        if found is not None and found.path != path:
            found = None
        self._found[path] = found
        return found

    def _decode(self, line: bytes) -> Persisted | None:
        """A stored line's entry, checked again: the index is a file anyone can write."""
        entry = entry_of(line_value(line))
        return entry if entry is not None and self.accept(entry.path) else None

    def _load(self) -> None:
        """On first use: ``manifest.json``, then the log through its index."""
        if self._legacy is not None:
            return
        self.folder_ok(False)
        check_harness_file(self.file)  # a log linked from elsewhere is refused, never trusted
        self._legacy = self._read_legacy()
        if not self.file.exists():
            return  # nothing logged: reading makes no index
        _, torn = self._log.sync(final=True)
        for message in self._log.query("problems", []):
            self.report(message)  # every bad line of the log, whoever read it first
        if torn:
            self.report(f"{MANIFEST} ends in a line cut off by an interrupted write "
                        f"({torn} bytes): that line is ignored")

    def _read_legacy(self) -> dict[str, Persisted]:
        found: dict[str, Persisted] = {}
        legacy = self.folder / LEGACY_MANIFEST
        if not os.path.lexists(legacy):
            return found
        try:  # capped, not through a link, any nesting or shape refused by name
            raw = parse_json(read_limited(legacy, LEGACY_MAX_BYTES, follow_links=False,
                                          label=LEGACY_MANIFEST), LEGACY_MANIFEST)
            files = raw.get("files", {}) if isinstance(raw, dict) else {}
        except UntrustedFileError as exc:
            self.report(f"{exc}: its entries are not trusted")
            return found
        for value in files.values() if isinstance(files, dict) else ():
            entry = entry_of(value)
            if entry is not None and self.accept(entry.path):
                found[entry.path] = entry
        return found

    def _forget(self, batch: Batch | None) -> None:
        """Drop decoded lookups the lines just indexed may change (all, for ``None``)."""
        if batch is None:
            self._found.clear()
            self._pointer_sets.clear()
            return
        for path, _ in batch.entries:
            self._found.pop(unkey(path), None)
        for path, _ in batch.pointers:
            self._pointer_sets.pop(unkey(path), None)

    # -- writing ----------------------------------------------------------------------------

    def add(self, entry: Persisted) -> None:
        self._added[entry.path] = entry
        self._pending.append((entry_line(entry), entry.path, None))

    def add_pointer(self, path: str, text: str) -> None:
        digest = sha256_text(text)
        if digest not in self.pointers(path):
            self._added_pointers.setdefault(path, set()).add(digest)
            self._pending.append((pointer_line(path, digest), path, digest))

    def _locked(self) -> ManifestLock:
        if self._lock is None:
            self._lock = ManifestLock(self.folder / LOCK, LOCK_TIMEOUT)
        return self._lock

    def flush(self) -> None:
        """Append the pending lines in one write, then index them, under the lock."""
        if not self._pending:
            return
        self.folder_ok(True)
        try:
            with self._locked():
                self._append()
        except Timeout as exc:
            raise OSError(f"the archive manifest is locked by another process: {exc}") from exc

    def _append(self) -> None:
        self._load()
        for message in self._log.sync(final=False, held=True)[0]:  # others' lines: the offset
            self.report(message)
        data = "".join(f"{line}\n" for line, _, _ in self._pending).encode(
            "utf-8", "surrogatepass")
        fd = open_no_follow(self.file, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            st = os.fstat(fd)
            start = st.st_size
            torn = start > (self._log.covered or 0)  # nobody else writes: a torn line
            if torn:
                self.report(f"{MANIFEST} ended in a line cut off by an interrupted write: "
                            "it is left as it is and ignored")
                data = b"\n" + data
            write_all(fd, data)
            sets = {path: self._pointer_sets.get(path) for path in self._added_pointers}
            # A kill from here on leaves the index behind the log: the next reader catches up.
            indexed = not torn and self._log.appended(fd, st, start, data, self._own_rows())
        finally:
            os.close(fd)
        if indexed:
            self._remember_own(sets)
        else:
            for message in self._log.sync(final=False, held=True)[0]:
                self.report(message)
        self._pending.clear()
        self._added.clear()
        self._added_pointers.clear()

    def _own_rows(self) -> Batch:
        """The index rows of the pending lines, as :func:`parse` would make of them (each
        names a path in the archive: this process built them)."""
        batch = Batch()
        for line, path, digest in self._pending:
            if digest is None:
                batch.entries.append((key(path), line.encode("utf-8", "surrogatepass")))
            else:
                batch.pointers.append((key(path), key(digest)))
        return batch

    def _remember_own(self, sets: dict[str, set[str] | None]) -> None:
        """Keep the decoded answers for the lines just indexed: they are the entries and
        digests this process holds already, so no lookup reads its own lines back.
        ``sets``: the pointer digests known for each path before the append."""
        for path, entry in self._added.items():
            if self.accept(path):
                self._found[path] = entry
        for path, known in sets.items():
            if known is not None:
                self._pointer_sets[path] = known | self._added_pointers[path]
