"""The archive's manifest: an append-only log of what ctxlab itself wrote, shared by processes.

``.task_outputs/tool-results/manifest.jsonl`` holds one JSON object per line, of two kinds:

* a file entry — ``{"path", "tool_use_id", "chars", "blake3", "format"}`` — for each result
  file or transcript ctxlab wrote (``format`` is ``text``, ``json`` or ``transcript``; lines
  written before BLAKE3 carry ``"sha256"`` instead, see :mod:`core.compact.content_hash`);
* a pointer entry — ``{"path", "pointer"}`` — the sha256 of a ``<persisted-output>`` wrapper
  ctxlab put into a history for that file. Only such exact texts are ever trusted.

Why a log: several processes (a workbench and a headless run, two ``ctxlab compact``) may
share one workspace. Each appends its lines under a cross-process :class:`~filelock.FileLock`
in one ``write``, so no process can drop another's entries (rewriting the whole file did),
and a workspace with a long history opens without reading it: the log is loaded on first
use. A line cut off by a kill is at most the last one; it is skipped and reported, and the
next append starts on a fresh line. A manifest from before this format (``manifest.json``,
one object rewritten whole) is still read; its entries are marked ``legacy``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from core.compact.content_hash import ALGORITHMS, CONTENT

MANIFEST = "manifest.jsonl"
LEGACY_MANIFEST = "manifest.json"
LOCK = ".manifest.lock"
LOCK_TIMEOUT = 30.0


@dataclass(frozen=True)
class Persisted:
    """One file ctxlab saved: what the manifest says about it."""

    path: str  # workspace-relative, "/"-separated
    tool_use_id: str
    chars: int
    digest: str  # hex digest of the file's bytes, by ``algorithm``
    format: str  # "text", "json" (a block list, stored as its JSON) or "transcript"
    algorithm: str = CONTENT  # "blake3", or "sha256" for a line written before it


def sha256_text(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes: for pointer texts and tool_use ids (short strings)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_line(entry: Persisted) -> str:
    """The log line of a file entry: exactly ``json.dumps`` of its object.

    Assembled from the json module's own string encoder rather than by ``json.dumps`` of a
    dict, which costs several times more, once per file a stage writes (hundreds per
    ``prepare()``); a test holds the two equal for any entry.
    """
    return (f'{{"path": {encode_basestring(entry.path)}, '
            f'"tool_use_id": {encode_basestring(entry.tool_use_id)}, '
            f'"chars": {int(entry.chars)}, '
            f'{encode_basestring(entry.algorithm)}: {encode_basestring(entry.digest)}, '
            f'"format": {encode_basestring(entry.format)}}}')


def _entry(obj: Any) -> Persisted | None:
    """The file entry a parsed line holds, or None (a pointer line, or a wrong shape).

    Exact type checks, not ``isinstance``: this runs once per line of a log that can hold
    100,000 lines, and ``json.loads`` makes no subclasses.
    """
    if type(obj) is not dict:
        return None
    for algorithm in ALGORITHMS:
        if algorithm in obj:
            break
    else:
        return None
    path, tid, chars = obj.get("path"), obj.get("tool_use_id"), obj.get("chars")
    digest, fmt = obj[algorithm], obj.get("format")
    if type(path) is str and type(tid) is str and type(chars) is int \
            and type(digest) is str and type(fmt) is str:
        return Persisted(path, tid, chars, digest, fmt, algorithm)
    return None


class Manifest:
    """The manifest of one archive folder, loaded lazily, appended in batches."""

    def __init__(self, folder: Path, report: Callable[[str], None],
                 accept: Callable[[str], bool] = lambda path: True) -> None:
        self.folder = folder
        self.file = folder / MANIFEST
        self.report = report
        self.accept = accept  # which paths an entry may name (the log is writable by anyone)
        self._entries: dict[str, Persisted] | None = None
        self._pointers: dict[str, set[str]] = {}
        self.legacy: set[str] = set()
        self._offset = 0  # bytes of the log already read (complete lines only)
        self._pending: list[str] = []
        self._lock: FileLock | None = None

    # -- reading ----------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, Persisted]:
        if self._entries is None:
            self._entries = {}
            self._read_legacy()
            self._read_tail(final=True)
        return self._entries

    def get(self, path: str, *, others: bool = True) -> Persisted | None:
        """The entry for ``path``; if unknown and ``others``, also looking at the lines other
        processes appended since (one read of the log's new end)."""
        found = self.entries.get(path)
        if found is None and others:
            self._read_tail(final=False)
            found = self.entries.get(path)
        return found

    def pointers(self, path: str) -> set[str]:
        self.entries  # noqa: B018 (loads the log)
        return self._pointers.get(path, set())

    def _read_legacy(self) -> None:
        try:
            raw = json.loads((self.folder / LEGACY_MANIFEST).read_text(encoding="utf-8"))
            files = raw.get("files", {}) if isinstance(raw, dict) else {}
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            self.report(f"{LEGACY_MANIFEST} is unreadable: its entries are not trusted")
            return
        for value in files.values() if isinstance(files, dict) else ():
            entry = _entry(value)
            if entry is not None and self.accept(entry.path):
                self._entries[entry.path] = entry  # type: ignore[index]
                self.legacy.add(entry.path)

    def _read_tail(self, final: bool) -> None:
        """Read complete lines appended since the last read.

        ``final`` (on first load and under the lock) means a trailing partial line is a
        torn write, not a line another process is still writing: it is reported.
        """
        try:
            with open(self.file, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")[:-1]
        try:  # every line whole: one parse of them all, not one per line
            values = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
        except ValueError:
            values = None  # a bad or blank line somewhere: line by line, each reported
        if values is not None and len(values) == len(lines):
            for value in values:
                self._take_value(value)
        else:
            for number, line in enumerate(lines):
                self._take(line, number)
        self._offset += end
        if final and data[end:]:
            self.report(f"{MANIFEST} ends in a line cut off by an interrupted write "
                        f"({len(data) - end} bytes): that line is ignored")

    def _take(self, line: bytes, number: int) -> None:
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except ValueError:
            self.report(f"{MANIFEST}: a line that is not JSON is ignored")
            return
        self._take_value(obj)

    def _take_value(self, obj: Any) -> None:
        entry = _entry(obj)
        assert self._entries is not None
        if entry is None and type(obj) is dict and len(obj) == 2:
            path, pointer = obj.get("path"), obj.get("pointer")
            if type(path) is str and type(pointer) is str:  # the commonest line: first
                known = self._pointers.get(path)
                if known is None:
                    self._pointers[path] = {pointer}
                else:
                    known.add(pointer)
                return
        if entry is not None and not self.accept(entry.path):
            self.report(f"{MANIFEST}: an entry for a file outside the archive is ignored")
        elif entry is not None:
            self._entries[entry.path] = entry
            if self.legacy:
                self.legacy.discard(entry.path)
        elif isinstance(obj, dict) and isinstance(obj.get("pointer"), str) \
                and isinstance(obj.get("path"), str):
            self._pointers.setdefault(obj["path"], set()).add(obj["pointer"])
        else:
            self.report(f"{MANIFEST}: a line of unknown shape is ignored")

    # -- writing ----------------------------------------------------------------------------

    def add(self, entry: Persisted) -> None:
        self.entries[entry.path] = entry
        self.legacy.discard(entry.path)
        self._pending.append(entry_line(entry))

    def add_pointer(self, path: str, text: str) -> None:
        digest = sha256_text(text)
        known = self._pointers.setdefault(path, set())
        if digest not in known:
            known.add(digest)
            self._pending.append(f'{{"path": {encode_basestring(path)}, '
                                 f'"pointer": {encode_basestring(digest)}}}')

    def flush(self) -> None:
        """Append the pending lines in one write, under the cross-process lock."""
        if not self._pending:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._lock is None:
            self._lock = FileLock(str(self.folder / LOCK), timeout=LOCK_TIMEOUT)
        try:
            with self._lock:
                self._append()
        except Timeout as exc:
            raise OSError(f"the archive manifest is locked by another process: {exc}") from exc

    def _append(self) -> None:
        self.entries  # noqa: B018 (load before appending, so the offset is right)
        self._read_tail(final=False)
        lines = "".join(f"{line}\n" for line in self._pending)
        fd = os.open(self.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size > self._offset:  # under the lock nobody is writing: a torn line
                self.report(f"{MANIFEST} ended in a line cut off by an interrupted write: "
                            "it is left as it is and ignored")
                lines = "\n" + lines
            data = lines.encode("utf-8", "surrogatepass")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            self._offset = size + len(data)
        finally:
            os.close(fd)
        self._pending.clear()
