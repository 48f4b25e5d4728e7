"""What tells one watched conversation from another, and which request is no turn of one.

A client resends its history on every call but says little about which history it is.
Claude Code says most: every call carries its session id (the ``x-claude-code-session-id``
header, and ``session_id`` inside the JSON string ``metadata.user_id``), and its system
prompt opens with a billing block, ``x-anthropic-billing-header: cc_version=….<hash>;
cc_entrypoint=…;``, whose hash follows the first user message. After a compaction the
first message is the summary, so the hash changes: keyed on the whole system text, the
compacted conversation looked like a new one. Such volatile header lines are left out of
the system text a conversation is known by.

The session alone is not a conversation: a subagent (the Task tool) runs in the same
session with its own system prompt and first message, and says which agent it is in the
``x-claude-code-agent-id`` header (the main conversation sends none). So a conversation's
*family* is the session and the agent — not the system text, which changes within a
session (a resumed run describes the model differently, ``/model`` rewrites it) — and,
for a client that names no session, the stable system text; within a family the first
message tells conversations apart (for a client that names no agent, two subagents of
one type share a system prompt, not a task).

Codex names its thread in the ``session-id`` and ``thread-id`` headers (and, as
``prompt_cache_key``, in the body), which identify an OpenAI client's conversations the way
Claude Code's session header does; a client that names none is known by its
``instructions`` or leading system/developer messages.

Claude Code compacts by asking the model for a summary: the same system prompt, tools and
history, with the summary instructions appended to the last user message. That request is
a side call: its purpose is ``summary``, and it is no turn of the conversation to diff the
next request against. The compaction itself shows on the request after it, which starts
with the summary.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.messages import system_text
from core.sources.watch import openai_requests as openai

SESSION_HEADER = "x-claude-code-session-id"
# The session headers, first found wins: Claude Code's, then Codex's (it sends both of its
# own, equal; ``thread-id`` stays the same across a compaction).
SESSION_HEADERS = (SESSION_HEADER, "session-id", "thread-id")
CODEX_WINDOW_HEADER = "x-codex-window-id"  # "<thread>:<compactions so far>"
CODEX_METADATA_HEADER = "x-codex-turn-metadata"  # JSON: request_kind, compaction.trigger…
AGENT_HEADER = "x-claude-code-agent-id"
# System lines that change within one conversation and say nothing of its context.
VOLATILE_PREFIXES = ("x-anthropic-billing-header:",)
# Words of Claude Code's summary instructions (appended to the last user message): the
# block opens with the first, the task follows (a line trimmed short keeps the first).
SUMMARY_TASKS = ("critical: respond with text only",
                 "your task is to create a detailed summary of the conversation so far")
OLD_SESSION = re.compile(r"session_([0-9a-fA-F-]{36})")
MAX_SESSION = 200  # characters of a session id kept; a longer one is no session id


def header_id(value: str | None) -> str | None:
    """A session or agent id header as kept: ``None`` when absent, empty or too long."""
    return _usable(value)


def _usable(value: Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= MAX_SESSION:
        return value
    return None


def session_of(body: dict[str, Any], header: str | None = None) -> str | None:
    """The client's session id: the header when it sent one, else ``metadata.user_id``'s
    ``session_id`` (a JSON string in Claude Code's requests; older clients wrote
    ``user_<hash>_account__session_<uuid>``), else ``None``."""
    if _usable(header):
        return header
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if not isinstance(user_id, str):
        return None
    if not user_id.startswith("{"):
        found = OLD_SESSION.search(user_id)
        return found.group(1) if found else None
    try:
        parsed = json.loads(user_id)
    except ValueError:
        return None
    return _usable(parsed.get("session_id")) if isinstance(parsed, dict) else None


def comparable(value: Any) -> Any:
    """``value`` as two requests are compared: no ``cache_control`` (clients move it to the
    newest block on every call), and a string ``content`` as the one text block it stands
    for (Claude Code sends a prompt as a block, then as a string)."""
    if isinstance(value, dict):
        return {k: ([{"type": "text", "text": v}] if k == "content" and isinstance(v, str)
                    else comparable(v))
                for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def _volatile(text: str) -> bool:
    return text.lstrip().lower().startswith(VOLATILE_PREFIXES)


def stable_system_text(body: dict[str, Any], *, api_openai: bool = False) -> str:
    """The system prompt as text without its volatile header lines (a block of them, or
    such a line of a string prompt); of an OpenAI request, its ``instructions`` or leading
    system/developer messages."""
    if api_openai:
        return openai.instructions_text(body)
    system = body.get("system")
    if isinstance(system, str):
        return "\n".join(line for line in system.split("\n") if not _volatile(line))
    if isinstance(system, list):
        system = [b for b in system if not (isinstance(b, dict)
                                            and isinstance(b.get("text"), str)
                                            and _volatile(b["text"]))]
    return system_text(system)


def is_summary_request(body: dict[str, Any]) -> bool:
    """Is this a client's request for a summary of its conversation (Claude Code's
    instructions in the last user message)?"""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return False
    last_user = next((m for m in reversed(messages)
                      if isinstance(m, dict) and m.get("role") == "user"), None)
    text = openai.content_text(last_user.get("content")).lower() \
        if isinstance(last_user, dict) else ""
    return any(task in text for task in SUMMARY_TASKS)


def openai_session(body: dict[str, Any], header: str | None = None) -> str | None:
    """An OpenAI client's session: its session or thread header (Codex sends both), else
    the body's ``prompt_cache_key`` (Codex sets it to the thread id; other clients to
    whatever keeps one conversation's cache warm)."""
    return _usable(header) or _usable(body.get("prompt_cache_key"))


def is_side_call(body: dict[str, Any], *, api_openai: bool = False) -> bool:
    """A call beside the conversation, never a turn of it: a ``max_tokens: 1`` probe, or a
    small call without tools (Claude Code's titles and topic checks). It shares the session
    of the conversation it is about, so it must not be taken for that conversation's next
    request, nor for its continuation after a compaction. An OpenAI request's instructions
    messages are not counted as history."""
    if api_openai:
        items = [i for i in openai.history(body) if not openai.is_instructions(i)]
        return not body.get("tools") and len(items) <= 2
    messages = body.get("messages")
    small = not isinstance(messages, list) or len(messages) <= 2
    return body.get("max_tokens") == 1 or (not body.get("tools") and small)
