"""Where compacted content goes: tool-result files, their manifest, transcripts, the ledger.

Every byte a stage takes out of the context must stay recoverable from a file the context
still points to. This module owns those files and the pointer texts that name them:

* ``<persisted-output>`` wrappers and ``[Earlier tool result saved at …]`` placeholders point
  at ``.task_outputs/tool-results/<id>-<hash>.txt``; paths are workspace-relative so an
  archive can be moved (the course writes absolute paths).
* A manifest records what ctxlab itself persisted (tool_use id, length, sha256). Only a
  pointer listed there, for the same tool_use id, with its file intact, is trusted — a tool
  output that merely looks like a wrapper is content, and is saved like any other.
* File names carry a hash of the tool_use id, so ids that sanitise alike never share a file,
  and a file is never overwritten with different content.
* Transcripts are whole message lists, one JSON message per line.

All writes are atomic: a temporary file in the same directory, then ``os.replace``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.measure import json_chars

RESULTS_DIR = Path(".task_outputs/tool-results")
TRANSCRIPT_DIR = Path(".transcripts")
MANIFEST = "manifest.json"

WRAPPER_HEAD = "<persisted-output>\n"
EARLIER_PREFIX = "[Earlier tool result saved at "
_ARCHIVE_MARKER = re.compile(r"\[(\d+) messages archived at (.+)\]")
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_TMP_SERIAL = itertools.count()


def wrapper_text(path: str, preview: str) -> str:
    """The course's persisted wrapper, byte for byte (with a relative path)."""
    return f"<persisted-output>\nFull output: {path}\nPreview:\n{preview}\n</persisted-output>"


def earlier_text(path: str) -> str:
    """The micro_compact placeholder, byte for byte (with a relative path)."""
    return f"{EARLIER_PREFIX}{path}]"


def archive_marker_text(count: int, path: str) -> str:
    return f"[{count} messages archived at {path}]"


def pointer_path(content: Any) -> str | None:
    """The path a wrapper or placeholder names, or None if ``content`` is neither shape."""
    if not isinstance(content, str):
        return None
    if content.startswith(WRAPPER_HEAD):
        for line in content.splitlines():
            if line.startswith("Full output: "):
                return line[len("Full output: "):].strip()
        return None
    if content.startswith(EARLIER_PREFIX) and content.endswith("]"):
        return content[len(EARLIER_PREFIX):-1].strip()
    return None


def archive_marker_path(content: Any) -> str | None:
    if not isinstance(content, str):
        return None
    match = _ARCHIVE_MARKER.fullmatch(content)
    return match.group(2) if match else None


def content_size(content: Any) -> int:
    """Length of a tool_result content: its text, or its JSON when it is a block list."""
    return len(content) if isinstance(content, str) else json_chars(content)


def content_as_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def safe_id(tool_use_id: str) -> str:
    """The course's sanitised id (kept readable), cut shorter to leave room for a hash."""
    return _SAFE.sub("_", tool_use_id)[:100] or "unknown"


def atomic_write_text(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    ``os.replace`` alone survives a killed process; ``durable`` adds an fsync for data that
    must also survive a power cut (sessions). Archive files skip it: hundreds of fsyncs per
    ``prepare()`` would cost more than all of the compaction itself.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_TMP_SERIAL)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8", errors="surrogatepass", newline="") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_TMP_NAME = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")


def sweep_stale_temp(folder: Path) -> list[str]:
    """Remove temporary files left by a process that was killed mid-write.

    Only files named by :func:`atomic_write_text` whose writer is gone are touched; the
    real files never depend on them (``os.replace`` had not happened yet).
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TMP_NAME.match(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


@dataclass(frozen=True)
class Persisted:
    """One tool result ctxlab saved: what the manifest says about its file."""

    path: str  # workspace-relative, "/"-separated
    tool_use_id: str
    chars: int
    sha256: str
    format: str  # "text" or "json" (a block list, stored as its JSON)


def _entry_json(key: str, entry: Persisted) -> str:
    """One manifest entry as it appears inside the manifest's ``files`` object."""
    return f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(vars(entry), ensure_ascii=False)}"


class Archive:
    """The files of one workspace that hold what left the context, and the ledger of it."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(workspace).resolve()
        self.results_dir = self.workspace / RESULTS_DIR
        self.transcript_dir = self.workspace / TRANSCRIPT_DIR
        self.ledger: list[dict[str, Any]] = []
        for folder in (self.results_dir, self.transcript_dir):
            sweep_stale_temp(folder)
        self._manifest: dict[str, Persisted] = self._load_manifest()
        # Each entry's JSON text, kept so a flush joins strings instead of re-encoding every
        # entry: a long session persists thousands of results and flushes after each stage.
        self._manifest_json = {k: _entry_json(k, v) for k, v in self._manifest.items()}
        self._manifest_dirty = False

    # -- paths ------------------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()

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

    def _load_manifest(self) -> dict[str, Persisted]:
        path = self.results_dir / MANIFEST
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return {k: Persisted(**v) for k, v in raw.get("files", {}).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def flush(self) -> None:
        """Write the manifest if it changed (once per stage, not once per file)."""
        if not self._manifest_dirty:
            return
        # The text json.dumps({"files": {k: vars(v) for k, v in sorted(...)}}) would give.
        entries = ", ".join(self._manifest_json[k] for k in sorted(self._manifest_json))
        atomic_write_text(self.results_dir / MANIFEST, '{"files": {' + entries + "}}")
        self._manifest_dirty = False

    def manifest(self) -> dict[str, Persisted]:
        return dict(self._manifest)

    def manifest_entry(self, rel_path: str) -> Persisted:
        return self._manifest[rel_path]

    def is_persisted(self, rel_path: str) -> bool:
        return rel_path in self._manifest

    # -- tool results -----------------------------------------------------------------------

    def path_for(self, tool_use_id: str, content: Any) -> str:
        """The relative path ``persist`` would use, computed without writing anything."""
        text = content_as_text(content)
        stem = f"{safe_id(tool_use_id)}-{_sha256(tool_use_id)[:8]}"
        rel = self.rel(self.results_dir / f"{stem}.txt")
        known = self._manifest.get(rel)
        if known is None or (known.tool_use_id == tool_use_id and known.sha256 == _sha256(text)):
            return rel
        # Same id, different content (ids can repeat across sessions): never overwrite.
        return self.rel(self.results_dir / f"{stem}-{_sha256(text)[:8]}.txt")

    def persist(self, tool_use_id: str, content: Any) -> str:
        """Save a tool result byte-exact; return its workspace-relative path."""
        rel = self.path_for(tool_use_id, content)
        text = content_as_text(content)
        digest = _sha256(text)
        known = self._manifest.get(rel)
        target = self.workspace / rel
        if known and known.sha256 == digest and target.is_file():
            return rel
        atomic_write_text(target, text)
        self._manifest[rel] = Persisted(rel, tool_use_id, len(text), digest,
                                        "text" if isinstance(content, str) else "json")
        self._manifest_json[rel] = _entry_json(rel, self._manifest[rel])
        self._manifest_dirty = True
        return rel

    def trusted_pointer(self, tool_use_id: str, content: Any) -> str | None:
        """The path of a pointer ctxlab wrote for this very result, with its file intact."""
        path = pointer_path(content)
        if path is None:
            return None
        entry = self._entry(path)
        if entry is None or entry.tool_use_id != tool_use_id:
            return None
        file = self.workspace / entry.path
        try:
            if file.stat().st_size < entry.chars:  # bytes ≥ chars for UTF-8 text
                return None
        except OSError:
            return None
        return entry.path

    def broken_pointer(self, tool_use_id: str, content: Any) -> str | None:
        """A pointer ctxlab wrote (or one shaped like it, into its own folder) whose file is gone.

        Such a text must never be persisted as if it were the result (the course then
        chains a pointer to a pointer); the caller reports it instead.
        """
        path = pointer_path(content)
        if path is None or self.trusted_pointer(tool_use_id, content):
            return None
        inside = self.resolve_inside(path, self.results_dir)
        if inside is None:
            return None
        entry = self._entry(path)
        if entry is not None and entry.tool_use_id != tool_use_id:
            return None  # someone else's pointer quoted in this output: plain content
        return None if inside.is_file() and entry is None else path

    def _entry(self, path: str) -> Persisted | None:
        # Fast path: the exact relative path ctxlab itself wrote (no filesystem call).
        known = self._manifest.get(path)
        if known is not None:
            return known
        inside = self.resolve_inside(path, self.results_dir)
        if inside is None:
            return None
        return self._manifest.get(self.rel(inside))

    def read_result(self, rel_path: str) -> Any:
        """The original content of a persisted result (a string, or the block list)."""
        entry = self._entry(rel_path)
        text = (self.workspace / rel_path).read_text(encoding="utf-8", errors="surrogatepass")
        if entry is not None and entry.format == "json":
            return json.loads(text)
        return text

    def preview(self, rel_path: str, chars: int) -> str:
        """The first ``chars`` characters of a persisted result's text."""
        with open(self.workspace / rel_path, encoding="utf-8", errors="replace") as fh:
            return fh.read(chars)

    # -- transcripts ------------------------------------------------------------------------

    def write_transcript(self, messages: list[dict[str, Any]]) -> str:
        """Save the whole message list before anything is removed; return its relative path."""
        path = self.transcript_dir / f"transcript_{uuid.uuid4().hex}.jsonl"
        lines = "".join(json.dumps(m, default=str, ensure_ascii=False) + "\n" for m in messages)
        atomic_write_text(path, lines)
        return self.rel(path)

    def valid_archive_marker(self, content: Any) -> bool:
        path = archive_marker_path(content)
        if path is None:
            return False
        inside = self.resolve_inside(path, self.transcript_dir)
        return inside is not None and inside.is_file()

    def read_transcript(self, rel_path: str) -> list[dict[str, Any]]:
        text = (self.workspace / rel_path).read_text(encoding="utf-8", errors="surrogatepass")
        # split on "\n" only: splitlines() would also cut at U+2028 inside a JSON string
        return [json.loads(line) for line in text.split("\n") if line.strip()]

    # -- ledger -----------------------------------------------------------------------------

    def record(self, tool_use_id: str, stage: str, chars: int, where: str,
               **extra: Any) -> dict[str, Any]:
        entry = {"tool_use_id": tool_use_id, "stage": stage, "chars": chars, "where": where,
                 **extra}
        self.ledger.append(entry)
        return entry

    def recover(self, tool_use_id: str, where: str, depth: int = 0) -> Any:
        """Follow a ledger ``where`` back to the original content of a tool result.

        A transcript may hold the result as a pointer written by an earlier stage; the
        chain is followed (bounded) until real content is found.
        """
        if depth > 16:
            raise LookupError(f"pointer chain too long for {tool_use_id}")
        if self.resolve_inside(where, self.results_dir) is not None:
            return self.read_result(where)
        if self.resolve_inside(where, self.transcript_dir) is None:
            raise LookupError(f"{where} is not an archive file")
        found: Any = None
        for message in self.read_transcript(where):
            for block in message.get("content") or []:
                if (isinstance(block, dict) and block.get("type") == "tool_result"
                        and block.get("tool_use_id") == tool_use_id):
                    found = block.get("content", "")
        if found is None:
            marker_paths = [archive_marker_path(m.get("content"))
                            for m in self.read_transcript(where)]
            for nested in filter(None, marker_paths):
                try:
                    return self.recover(tool_use_id, nested, depth + 1)
                except LookupError:
                    continue
            raise LookupError(f"{tool_use_id} not found in {where}")
        nested = self.trusted_pointer(tool_use_id, found)
        return self.recover(tool_use_id, nested, depth + 1) if nested else found
