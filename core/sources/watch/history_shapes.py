"""Reading one entry of a watched history, whichever API sent it.

Comparing two requests needs, of each entry, its readable text, the tool calls it makes or
answers, and whether it is a summary. The Messages API nests those in content blocks
(``tool_use`` / ``tool_result`` with ``tool_use_id``); the Responses API makes each one an
item of its own (``function_call`` / ``function_call_output`` with ``call_id``, a
``compaction`` item holding the encrypted summary); Chat Completions puts ``tool_calls``
on the assistant message and answers with ``role: "tool"`` messages (``tool_call_id``).
These functions read all three, so :mod:`core.sources.watch.conversations` diffs any of
them the same way.
"""

from __future__ import annotations

import json
from typing import Any

from core.sources.watch.openai_requests import (
    CODEX_SUMMARY_PREFIX,
    INSTRUCTION_ROLES,
    TEXT_PARTS,
    TOOL_CALLS,
    TOOL_OUTPUTS,
    item_type,
)

# Claude Code starts a compacted session with "This session is being continued from a
# previous conversation…"; the course's auto_compact with "[Conversation compressed. …]";
# ctxlab with "[Compacted]"; Codex with "Another language model started to solve this
# problem and produced a summary…".
SUMMARY_MARKERS = ("continued from a previous conversation", "conversation compressed",
                   "summary", "summarized", "[compacted]", "compacted", CODEX_SUMMARY_PREFIX)


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content
                        if isinstance(b, dict) and isinstance(b.get("text", ""), str))
    return ""


def text_of(message: Any) -> str:
    """The readable text of an entry (text blocks or parts, tool-result text), for
    previews; an encrypted compaction item says what it is and how large."""
    kind = item_type(message)
    if kind == "compaction":
        size = len(str(message.get("encrypted_content") or ""))
        return f"[compaction: {size:,} chars of encrypted summary]"
    if kind in TOOL_OUTPUTS:
        return result_text(message.get("output"))
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") in TEXT_PARTS:
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(result_text(block.get("content")))
    return " ".join(parts)


def preview_of(message: Any) -> str:
    """What a ledger shows of an entry that went: its text, or for a tool call (which has
    none) the tool and what it was given. Not for telling summaries apart: a command's
    arguments may well mention one."""
    if item_type(message) in TOOL_CALLS:
        return call_text(message)
    if item_type(message) == "reasoning":
        return " ".join(str(p.get("text", "")) for p in message.get("summary") or []
                        if isinstance(p, dict))
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    named = [call_text(c) for c in calls if isinstance(c, dict)] \
        if isinstance(calls, list) else []
    return " ".join([text_of(message), *named]).strip()


def call_text(call: dict[str, Any]) -> str:
    """A tool call as a reader would name it: the tool and what it was given (a Responses
    call item, or a Chat Completions ``tool_calls`` entry)."""
    inner = call.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else call
    name = function.get("name") or call.get("type") or "call"
    given = function.get("arguments") or function.get("input") or call.get("action") or ""
    return f"{name} {given if isinstance(given, str) else json.dumps(given)}".strip()


def role_of(message: Any) -> str | None:
    """Who an entry is from: its role, or — for a Responses item, which has none — its
    kind (``function_call``, ``function_call_output``, ``compaction``…)."""
    if not isinstance(message, dict):
        return None
    return message.get("role") or item_type(message) or None


def tool_results(messages: list[Any]) -> dict[str, Any]:
    """Tool call id → the result's content, over the whole list (Messages ``tool_result``
    blocks, Responses output items, Chat Completions ``tool`` messages)."""
    found: dict[str, Any] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        if item_type(message) in TOOL_OUTPUTS:
            found[str(message.get("call_id"))] = message.get("output", "")
            continue
        if message.get("role") == "tool":
            found[str(message.get("tool_call_id"))] = message.get("content", "")
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = block.get("content", "")
    return found


def tool_ids(message: Any) -> list[str]:
    """The ids of the tool calls an entry makes or answers."""
    if not isinstance(message, dict):
        return []
    kind = item_type(message)
    if kind in TOOL_CALLS or kind in TOOL_OUTPUTS:
        return [str(message.get("call_id") or message.get("id"))]
    if message.get("role") == "tool":
        return [str(message.get("tool_call_id"))]
    ids = [str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict)] \
        if isinstance(message.get("tool_calls"), list) else []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result"):
            ids.append(str(block.get("id") or block.get("tool_use_id")))
    return ids


def is_summary(message: Any) -> bool:
    """Does this entry stand for a summary of the past (a summary's text, or the
    encrypted ``compaction`` item an OpenAI compaction returns)?"""
    if item_type(message) == "compaction":
        return True
    if isinstance(message, dict) and message.get("role") in INSTRUCTION_ROLES:
        return False  # instructions that mention summaries (Codex's do) are none
    text = text_of(message).lower()
    return any(marker in text for marker in SUMMARY_MARKERS)


def is_summary_item(message: Any) -> bool:
    """Is this entry an OpenAI client's summary, as it places it after the history it kept
    (a ``compaction`` item; a message that opens with Codex's summary preamble)? Stricter
    than :func:`is_summary`: a kept message that mentions compaction is none."""
    if item_type(message) == "compaction":
        return True
    return item_type(message) == "message" and message.get("role") == "user" and \
        text_of(message).lstrip().lower().startswith(CODEX_SUMMARY_PREFIX)


def summary_text(message: Any) -> str:
    """The text of a summary entry's block that holds the summary (Claude Code puts a
    reminder block before it in the same message)."""
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and any(m in text.lower() for m in SUMMARY_MARKERS):
            return text
    return text_of(message)


def encrypted_size(message: Any) -> int | None:
    """Characters of a compaction item's encrypted content (None for any other entry)."""
    if item_type(message) != "compaction":
        return None
    return len(str(message.get("encrypted_content") or ""))
