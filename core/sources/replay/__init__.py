"""Replaying recorded sessions: importers for other agents' files, and the replay source.

``load_recording(path)`` reads a Claude Code session, a Codex rollout, a Messages JSON
history or a Requests JSONL file into one neutral :class:`Recording`;
:class:`~core.sources.replay.source.ReplaySource` walks it request by request beside ctxlab's own
pipeline. Each format has its module, and a docs page (docs/replay/).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.sources.replay import claude_code, codex, messages_json, requests_jsonl
from core.sources.replay.detect import FORMATS, detect
from core.sources.replay.file_rows import Rows, session_head
from core.sources.replay.model import Compaction, Exchange, Notice, Recording, ReplayError
from core.sources.replay.reading import MAX_BYTES, cycle_collection_paused, read_text
from core.sources.replay.subagents import read_subagents

LOADERS: dict[str, Callable[[Path, Any], Recording]] = {
    "claude-code": claude_code.load,
    "codex": codex.load,
    "messages": messages_json.load,
    "requests": requests_jsonl.load,
}

__all__ = ["FORMATS", "Compaction", "Exchange", "Notice", "Recording", "ReplayError",
           "load_recording"]


def load_recording(path: Path | str, fmt: str = "auto", max_bytes: int = MAX_BYTES,
                   conversation: str | None = None, with_subagents: bool = True
                   ) -> Recording:
    """Read ``path`` as ``fmt`` (``auto`` detects it); raise :class:`ReplayError` with a
    one-line reason when it cannot be replayed at all. ``conversation`` picks one of a
    watch recording's conversations (the longest by default). Its subagent transcripts are
    read too (``with_subagents``), each for its totals."""
    path = Path(path)
    # A Claude Code session is parsed from its file's rows as they are read: its text is
    # never held beside its records (detected from its first rows alone). Named by
    # ``--format``, its file is refused as ``read_text`` would (missing, too large, empty,
    # binary) before any row is parsed.
    if conversation is None and fmt == "claude-code":
        session_head(path, max_bytes)
    if conversation is None and (fmt == "claude-code" or (fmt == "auto" and _head_format(
            path, max_bytes) == "claude-code")):
        with cycle_collection_paused():
            recording = LOADERS["claude-code"](path, Rows(path, max_bytes))
        return _finish(path, "claude-code", recording, max_bytes, with_subagents)
    text = read_text(path, max_bytes)
    if fmt == "auto":
        fmt = detect(path, text)
    if fmt not in LOADERS:
        raise ReplayError(f"unknown format {fmt!r}; choose from auto, {', '.join(FORMATS)}")
    if conversation is not None and fmt != "requests":
        raise ReplayError(f"{path}: --conversation picks a conversation of a watch recording "
                          f"(requests format); this file is {fmt}")
    with cycle_collection_paused():
        recording = (requests_jsonl.load(path, text, conversation) if fmt == "requests"
                     else LOADERS[fmt](path, text))
    return _finish(path, fmt, recording, max_bytes, with_subagents)


def _head_format(path: Path, max_bytes: int) -> str | None:
    """The format its first rows show (the whole file decides when they show none: a
    Messages document spread over many lines, a file refused with its first line quoted)."""
    try:
        return detect(path, session_head(path, max_bytes))
    except ReplayError:
        return None


def _finish(path: Path, fmt: str, recording: Recording, max_bytes: int,
            with_subagents: bool = True) -> Recording:
    """The subagents read, or the recording refused when it holds no request."""
    if with_subagents and recording.subagents:
        recording.subagents_read = read_subagents(
            recording.subagents, lambda p: load_recording(p, "auto", max_bytes, None, False))
    if not recording.exchanges:
        why = f"; {recording.summary_line()}" if recording.lines_total else ""
        first = next((n for n in recording.notices if n.kind == "malformed"), None)
        why += f" (first: {first.message.removesuffix('; skipped')})" if first else ""
        raise ReplayError(f"{path}: no model request found as {fmt}{why}")
    return recording
