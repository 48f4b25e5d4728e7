"""Generated Claude Code sessions in the real shape, for the replay bench and tests.

Each request is the shape Claude Code writes: an assistant message split over lines (a
``thinking`` block, then a ``tool_use``, same ``message.id`` and ``usage`` on each), then a
``user`` line with the ``tool_result`` (and its ``toolUseResult`` copy), every line linked
by ``parentUuid``, with the bookkeeping keys and a ``progress`` line now and then. Usage
follows a known ratio — ``OVERHEAD`` tokens of unseen system prompt and tools plus one
token per ``RATIO`` chars of history — so a test can check the measured ratio; past
``COMPACT_AT`` tokens the agent auto-compacts (``compact_boundary`` + summary).
"""

from __future__ import annotations

import json
from pathlib import Path

RATIO = 3.6
OVERHEAD = 15_000
COMPACT_AT = 160_000
SESSION = "0f4e2a9c-3b7d-4c1e-8a56-9d2b7e1f0c34"
_BASE = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
         "sessionId": SESSION, "version": "2.0.14", "gitBranch": "main"}


def _line(kind: str, uuid: str, parent: str | None, n: int, **extra: object) -> str:
    record = {"parentUuid": parent, **_BASE, "type": kind, "uuid": uuid,
              "timestamp": f"2025-10-02T{9 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:"
                           f"{n % 60:02d}.000Z", **extra}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _output(n: int, chars: int) -> str:
    row = f"src/module_{n % 97}.py:{n % 400}: def handler_{n}(request): return render(request)\n"
    return (row * (chars // len(row) + 1))[:chars]


def claude_code_session(target_bytes: int, result_chars: int = 5_600) -> str:
    """A session of about ``target_bytes`` (3 lines per request, plus prompts)."""
    lines: list[str] = []
    size = 0
    parent: str | None = None
    history = 0  # the history's JSON chars, as the agent would send it
    n = 0
    while size < target_bytes:
        n += 1
        new: list[str] = []
        if n % 25 == 1:
            prompt = f"Step {n // 25 + 1}: check every handler in src/ for the render bug."
            new.append(_line("user", f"u{n}", parent, n, message={"role": "user",
                                                                   "content": prompt}))
            parent = f"u{n}"
            history += len(prompt) + 40
        tokens = OVERHEAD + int(history / RATIO)
        if tokens > COMPACT_AT:
            new.append(_line("system", f"c{n}", None, n, subtype="compact_boundary",
                             content="Conversation compacted", isMeta=False, level="info",
                             logicalParentUuid=parent,
                             compactMetadata={"trigger": "auto", "preTokens": tokens}))
            summary = ("This session is being continued from a previous conversation that "
                       f"ran out of context. Summary: handlers 1..{n} checked.\n\nIf you "
                       "need specific details from before compaction (like exact code "
                       "snippets, error messages, or content you generated), read the full "
                       "transcript at: /home/dev/.claude/projects/-home-dev-app/session.jsonl")
            new.append(_line("user", f"s{n}", f"c{n}", n, isCompactSummary=True,
                             isVisibleInTranscriptOnly=True,
                             message={"role": "user", "content": summary}))
            parent = f"s{n}"
            history = len(summary) + 40
            tokens = OVERHEAD + int(history / RATIO)
        usage = {"input_tokens": 4, "cache_creation_input_tokens": 800,
                 "cache_read_input_tokens": tokens - 804, "output_tokens": 120,
                 "service_tier": "standard"}
        message = {"id": f"msg_{n:06d}", "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-5-20250929", "stop_reason": None,
                   "stop_sequence": None, "usage": usage}
        thinking = {"type": "thinking", "thinking": f"Next I read module {n % 97}.",
                    "signature": "Eq" + "x" * 120}
        use = {"type": "tool_use", "id": f"toolu_{n:06d}", "name": "Read",
               "input": {"file_path": f"/home/dev/app/src/module_{n % 97}.py"}}
        new.append(_line("assistant", f"a{n}", parent, n, requestId=f"req_{n:06d}",
                         message={**message, "content": [thinking]}))
        new.append(_line("assistant", f"b{n}", f"a{n}", n, requestId=f"req_{n:06d}",
                         message={**message, "content": [use], "stop_reason": "tool_use"}))
        text = _output(n, result_chars)
        result = {"role": "user", "content": [{"tool_use_id": f"toolu_{n:06d}",
                                               "type": "tool_result", "content": text}]}
        new.append(_line("user", f"r{n}", f"b{n}", n, message=result,
                         toolUseResult={"type": "text", "file": {"filePath": "x.py",
                                                                 "numLines": 80}}))
        parent = f"r{n}"
        if n % 10 == 0:
            new.append(_line("progress", f"p{n}", parent, n,
                             data={"type": "hook_progress", "hookEvent": "PostToolUse"}))
            parent = f"p{n}"
        history += len(json.dumps([thinking, use])) + len(json.dumps(result)) + 60
        lines += new
        size += sum(len(x) + 1 for x in new)
    final = {"id": "msg_final", "type": "message", "role": "assistant",
             "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
             "content": [{"type": "text", "text": "Done."}],
             "usage": {"input_tokens": 4, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": OVERHEAD + int(history / RATIO) - 4,
                       "output_tokens": 2}}
    lines.append(_line("assistant", "final", parent, n + 1, message=final))
    return "\n".join(lines) + "\n"


def write_session(folder: Path, target_bytes: int) -> Path:
    path = folder / f"{SESSION}.jsonl"
    path.write_text(claude_code_session(target_bytes), encoding="utf-8")
    return path
