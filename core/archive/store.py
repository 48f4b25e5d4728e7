"""Where compacted content goes: tool-result files, their manifest, transcripts, the ledger.

Every byte a stage takes out of the context must stay recoverable from a file the context
still points to. This module owns those files and the pointer texts that name them:

* ``<persisted-output>`` wrappers and ``[Earlier tool result saved at …]`` placeholders point
  at ``.task_outputs/tool-results/<id>-<idhash>-<contenthash>.txt``; paths are
  workspace-relative so an archive can be moved (the course writes absolute paths).
* A file's name carries a hash of its content, so two different contents never share a name
  — not in one history, not across two processes on one workspace reusing the same
  tool_use ids — and a file is never overwritten with different bytes. The tool_use id's
  hash keeps ids that sanitise alike apart.
* The manifest (:mod:`core.archive.manifest`, append-only, under a cross-process lock, and
  looked up through a derived index of it) records every file ctxlab wrote with its content
  hash (BLAKE3, :mod:`core.archive.content_hash`), and the hash of every wrapper text it put
  into a history. A pointer is trusted only if its *whole text* is one ctxlab wrote for that
  file (a placeholder is fully determined by the path; a wrapper's hash must be recorded),
  for the same tool_use id, the file's bytes still match the recorded hash, and — because
  the manifest is a file anyone in the workspace can write — a wrapper can be rebuilt from
  those bytes (:mod:`core.archive.rebuild`), so replacing it by a bare pointer loses
  nothing. Anything else that looks like a pointer is content, and is saved like any other.
* A file whose bytes changed since ctxlab wrote it is reported (an ``error`` event of kind
  ``archive``) and never trusted or pointed at again (:mod:`core.archive.integrity`).
* Transcripts are whole message lists, one JSON message per line, listed in the manifest too
  (:mod:`core.archive.transcripts`).

Result files and transcripts are written atomically, and not durably, by
:mod:`core.archive.atomic` (which says why); the manifest is appended under its lock.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.archive.atomic import (
    atomic_write_bytes,
    rename_finished,
)
from core.archive.content_hash import (
    CONTENT,
    digest_and_chars,
    digest_bytes,
)
from core.archive.integrity import Integrity
from core.archive.manifest import (
    LEGACY_MANIFEST,
    MANIFEST,
    Manifest,
    Persisted,
    sha256_text,
)
from core.archive.recovery import ArchiveChanged, Recovery
from core.archive.streamed_write import Streamed, stream_to_temp
from core.archive.transcripts import Transcripts
from core.archive.trust import PointerTrust
from core.compact.pointers import (
    EARLIER_PREFIX,
    WRAPPER_HEAD,
    archive_marker_path,
    archive_marker_text,
    earlier_text,
    pointer_path,
    wrapper_text,
)
from core.events import Error, Event
from core.measure import forget_large, json_chars, note_json_chars, utf8

__all__ = ["EARLIER_PREFIX", "LEGACY_MANIFEST", "MANIFEST", "RESULTS_DIR", "TRANSCRIPT_DIR",
           "WRAPPER_HEAD", "Archive", "ArchiveChanged", "Persisted", "archive_marker_path",
           "archive_marker_text", "earlier_text", "pointer_path", "wrapper_text"]

RESULTS_DIR = Path(".task_outputs/tool-results")
TRANSCRIPT_DIR = Path(".transcripts")
CONTENT_HASH = 16  # hex digits of the content's hash in a result file's name
STREAMED_CHARS = 1 << 16  # from this length a result is saved in one streamed pass (faster
# than encoding it whole, then hashing, then writing: docs/PERFORMANCE.md, "Compaction")

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def content_size(content: Any) -> int:
    """Length of a tool_result content: its text, or its JSON when it is a block list."""
    return len(content) if isinstance(content, str) else json_chars(content)


def content_as_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def safe_id(tool_use_id: str) -> str:
    """The course's sanitised id (kept readable), cut shorter to leave room for a hash."""
    return _SAFE.sub("_", tool_use_id)[:100] or "unknown"


def _in_archive(path: str) -> bool:
    """Only a file directly in one of the archive folders can be a manifest entry: the log
    is a file anyone can write, and must never make ctxlab trust a path elsewhere."""
    folder, _, name = path.rpartition("/")
    return folder in _FOLDERS and name not in ("", ".", "..")


_FOLDERS = (RESULTS_DIR.as_posix(), TRANSCRIPT_DIR.as_posix())


def _same(entry: Persisted, digest: str) -> bool:
    """Does ``entry`` record this content digest? (An entry from before BLAKE3 never does:
    the content is then saved again under its new name, which loses nothing.)"""
    return entry.algorithm == CONTENT and entry.digest == digest


def _discard(event: Event) -> Any:
    return event


class Archive(Integrity, Transcripts, PointerTrust, Recovery):
    """The files of one workspace that hold what left the context, and the ledger of it."""

    def __init__(self, workspace: Path, emit: Callable[[Event], Any] = _discard) -> None:
        self.workspace = Path(workspace).resolve()
        self.results_dir = self.workspace / RESULTS_DIR
        self.transcript_dir = self.workspace / TRANSCRIPT_DIR
        # string forms for the per-file hot path (pathlib costs more than the syscalls)
        self._root = str(self.workspace)
        self._results_rel = RESULTS_DIR.as_posix()
        self._transcripts_rel = TRANSCRIPT_DIR.as_posix()
        self.ledger: list[dict[str, Any]] = []
        self.emit = emit
        self.problems: list[str] = []  # every report, also when nobody listens to events
        # Opening reads nothing: the manifest is read on first use, and the sweep of a killed
        # writer's temporary files runs before this archive's first write (a folder of
        # 50,000 results takes longer to list than the whole open should).
        self._digest_memo: tuple[str, str] | None = None  # (text, digest) of the last hashed
        self._ready = {}  # (what these four hold: core/archive/integrity.py)
        self._checked_folders = set()
        self._in_stage = False
        self._manifest = Manifest(self.results_dir, self._report, _in_archive,
                                  self._results_folder_ok)
        self._verified = {}
        self._changed = set()
        # tool_use_id -> a result saved ahead of its stage, still under its temporary name
        self._early: dict[str, Streamed] = {}
        self._rebuilt: dict[tuple[str, str, str], bool] = {}  # (path, digest, wrapper) -> ok
        self._lines = {}  # the last transcript's lines (core/archive/transcripts.py)

    def _report(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)
            self.emit(Error(message=message, kind="archive"))

    # -- paths ------------------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()

    def _abs(self, rel: str) -> str:
        return os.path.join(self._root, rel)

    def resolve_inside(self, rel_path: str, folder: Path) -> Path | None:
        """``rel_path`` (relative to the workspace, or absolute) if it lies inside ``folder``."""
        candidate = Path(rel_path)
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        try:
            resolved = candidate.resolve()
        except (OSError, RuntimeError, ValueError):  # loops, NUL bytes, lone surrogates
            return None
        root = folder.resolve()
        return resolved if resolved.is_relative_to(root) and resolved != root else None

    # -- manifest ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Append what changed to the manifest (once per stage, not once per file); this
        ends the open stage, so the next write checks its folder again."""
        try:
            self._manifest.flush()
        finally:
            self.end_stage()

    def _results_folder_ok(self, create: bool) -> None:
        """The manifest's check of its folder: before reading it, and before appending (then
        the check the stage's first write made counts, as for any write)."""
        if create:
            self._before_write()
        else:
            self._folder(self.results_dir, False)

    def manifest(self, *, transcripts: bool = False) -> dict[str, Persisted]:
        """The tool-result files ctxlab wrote (and the transcripts, when asked)."""
        entries = self._manifest.entries
        return entries if transcripts else {
            k: v for k, v in entries.items() if v.format != "transcript"}

    def manifest_entry(self, rel_path: str) -> Persisted:
        entry = self._manifest.get(rel_path)
        if entry is None:
            raise KeyError(rel_path)
        return entry

    def is_persisted(self, rel_path: str) -> bool:
        """Is ``rel_path`` a tool-result file ctxlab wrote (not a transcript)?"""
        entry = self._manifest.get(rel_path)
        return entry is not None and entry.format != "transcript"

    # -- tool results -----------------------------------------------------------------------

    def path_for(self, tool_use_id: str, content: Any) -> str:
        """The relative path ``persist`` would use, computed without writing anything."""
        return self._name(tool_use_id, self._digest(content_as_text(content)))

    def longest_path(self, tool_use_id: str) -> str:
        """The longest path ``persist`` can return for this id (the whole hash in the name),
        known without hashing: a wrapper built with it is as long as one can be."""
        return f"{self._results_rel}/{self._stem(tool_use_id)}-{'0' * 64}.txt"

    def _digest(self, text: str, data: bytes | None = None) -> str:
        """Content hash of the text's UTF-8 bytes; the last one is remembered, so asking for a
        path and then persisting the same text hashes it once."""
        memo = self._digest_memo
        if memo is not None and memo[0] is text:
            return memo[1]
        if data is None:
            data = text.encode("utf-8", "surrogatepass")
        digest = digest_bytes(data)
        self._digest_memo = (text, digest)
        return digest

    def _known_intact(self, rel: str, digest: str) -> bool:
        known = self._manifest.get(rel, others=False)
        return known is not None and _same(known, digest) and self.intact(known)

    @staticmethod
    def _stem(tool_use_id: str) -> str:
        return f"{safe_id(tool_use_id)}-{sha256_text(tool_use_id)[:8]}"

    def _name(self, tool_use_id: str, digest: str) -> str:
        stem = self._stem(tool_use_id)
        rel = f"{self._results_rel}/{stem}-{digest[:CONTENT_HASH]}.txt"
        known = self._manifest.get(rel, others=False)
        if known is None or (_same(known, digest) and known.tool_use_id == tool_use_id):
            return rel
        # Two contents whose hashes share a prefix: the whole hash tells them apart.
        return f"{self._results_rel}/{stem}-{digest}.txt"

    def begin_persist(self, tool_use_id: str, text: str) -> None:
        """Save a large text result before the history holding it is measured.

        The one pass that writes and hashes it also counts its JSON length
        (:mod:`core.archive.streamed_write`), and the count is handed to the measure, so
        measuring the history does not read the text again. The file stays under a
        temporary name until :meth:`persist` of the same text names it and lists it;
        :meth:`drop_early` removes one no stage used.
        """
        self.drop_early(tool_use_id)
        self._before_write()
        saved = stream_to_temp(self.results_dir, "result", text)
        note_json_chars(text, saved.json_chars)
        self._early[tool_use_id] = saved

    def drop_early(self, tool_use_id: str | None = None) -> None:
        """Remove saves made by :meth:`begin_persist` and not used (all if no id, and then
        the counts handed to the measure are let go too)."""
        if tool_use_id is None:
            forget_large()
        for key in [tool_use_id] if tool_use_id is not None else list(self._early):
            early = self._early.pop(key, None)
            if early is not None:
                early.abandon()

    def _streamed(self, tool_use_id: str, text: str) -> Streamed:
        early = self._early.pop(tool_use_id, None)
        if early is not None and early.text is text:
            return early
        if early is not None:
            early.abandon()
        return stream_to_temp(self.results_dir, "result", text)

    def persist(self, tool_use_id: str, content: Any) -> str:
        """Save a tool result byte-exact; return its workspace-relative path.

        A large text is encoded, hashed and written in one streamed pass to a temporary
        file, then renamed to its name (the hash); a smaller one is encoded once, hashed,
        and written atomically. Either way the file is complete under its name before the
        manifest lists it and before any pointer to it exists.
        """
        text = content_as_text(content)
        self._before_write()
        memo = self._digest_memo
        written: os.stat_result | None = None  # the file's stat, if the write took it
        if len(text) >= STREAMED_CHARS and not (memo is not None and memo[0] is text):
            saved = self._streamed(tool_use_id, text)
            digest = saved.digest
            self._digest_memo = (text, digest)
            rel = self._name(tool_use_id, digest)
            try:
                if self._known_intact(rel, digest):
                    saved.abandon()
                    return rel
                saved.commit(self._abs(rel))
            except BaseException:
                saved.abandon()
                raise
        else:
            data = utf8(text)  # the bytes measuring it made, if it was just measured
            forget_large()
            digest = self._digest(text, data)
            rel = self._name(tool_use_id, digest)
            if self._known_intact(rel, digest):
                return rel
            # A file of this name holds these very bytes (or was changed behind ctxlab's
            # back and is put right): replacing it can never lose a different content.
            written = atomic_write_bytes(self._abs(rel), data)
        self._wrote(rel, written)
        self._manifest.add(Persisted(rel, tool_use_id, len(text), digest,
                                     "text" if isinstance(content, str) else "json"))
        return rel

    def adopt(self, tool_use_id: str, spool: Path) -> str:
        """Move a file holding a whole tool output (UTF-8 text) into the archive.

        For outputs too large to hold in memory, such as a long command's: the file is
        hashed and counted as it is read, then renamed into place; nothing is copied.
        """
        digest, chars = digest_and_chars(spool)
        self._before_write()
        rel = self._name(tool_use_id, digest)
        target = self.workspace / rel
        known = self._manifest.get(rel, others=False)
        if known is not None and _same(known, digest) and self.intact(known):
            spool.unlink(missing_ok=True)
            return rel
        rename_finished(spool, target)
        self._wrote(rel)
        self._manifest.add(Persisted(rel, tool_use_id, chars, digest, "text"))
        return rel

    def wrap(self, rel: str, preview: str) -> str:
        """A ``<persisted-output>`` wrapper for ``rel``, recorded as one ctxlab wrote."""
        text = wrapper_text(rel, preview)
        self._manifest.add_pointer(rel, text)
        return text
