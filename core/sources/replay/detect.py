"""Which format a session file is in, from its first line (or its first character).

A JSON document that is an array, or an object with ``messages`` spread over several lines,
is Messages JSON, and so is a one-line file holding one request body; otherwise the first
line decides: ``{"type", "payload"}`` is a Codex
rollout (and so is a session object ``{"id", "timestamp", "instructions"}``, the older
layout's first line), a record with Claude Code's bookkeeping keys (``uuid``, ``parentUuid``,
``sessionId``…) is a Claude Code session, and a request body (or ``{"request": …}``) is
Requests JSONL (a Responses body too, even alone on one line: Messages JSON is a Messages
history; but ``{"input": "…", "output": "…"}`` is a data set's row, see
:func:`~core.sources.replay.requests_jsonl.body_of`). Anything else is refused with what
the first line looked like.
"""

from __future__ import annotations

import json
from pathlib import Path

import core.sources.replay.claude_code as claude_code
import core.sources.replay.codex as codex
import core.sources.replay.requests_jsonl as requests_jsonl
from core.sources.replay.model import ReplayError
from core.sources.replay.reading import first_object

FORMATS = ("claude-code", "codex", "messages", "requests")


def detect(path: Path, text: str) -> str:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "messages"
    first = first_object(text)
    if codex.looks_like(first):
        return "codex"
    if claude_code.looks_like(first):
        return "claude-code"
    if first is not None and requests_jsonl.looks_like(first):
        one_line = "\n" not in stripped.rstrip()
        # One saved body on one line is a history to replay message by message.
        return "messages" if one_line and "request" not in first and "messages" in first \
            else "requests"
    if stripped.startswith("{") and first is None:
        try:
            whole = json.loads(stripped)
        except (RecursionError, MemoryError):
            return "messages"  # whose reader says it is nested too deeply
        except ValueError:
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
            return "messages"
    head = stripped.split("\n", 1)[0][:60]
    raise ReplayError(f"{path}: not a session ctxlab can replay (Claude Code JSONL, Codex "
                      f"rollout, Messages JSON or Requests JSONL); it starts with {head!r}")
