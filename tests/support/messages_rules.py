"""The request checks the scripted Messages server applies, as the real API does.

The real API refuses a beta field sent without its ``anthropic-beta`` header, a compaction
trigger under its minimum, ``clear_thinking`` anywhere but first, and more than four
``cache_control`` breakpoints. The test server refuses the same requests with the same kind
of 400, so a test can prove ctxlab sends the headers and shapes the API needs.
"""

from __future__ import annotations

from typing import Any

EDIT_BETAS = {
    "clear_tool_uses_20250919": "context-management-2025-06-27",
    "clear_thinking_20251015": "context-management-2025-06-27",
    "compact_20260112": "compact-2026-01-12",
}
MIN_COMPACTION_TRIGGER = 50_000
MAX_CACHE_BREAKPOINTS = 4


def betas_of(headers: dict[str, str]) -> set[str]:
    return {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}


def count_breakpoints(value: Any) -> int:
    """``cache_control`` markers anywhere in tools, system and messages."""
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") else 0
        return own + sum(count_breakpoints(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(count_breakpoints(v) for v in value)
    return 0


def has_compaction_block(messages: Any) -> bool:
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "compaction" for b in content
        ):
            return True
    return False


def request_problem(body: Any, headers: dict[str, str]) -> str | None:
    """Why the API would refuse this request, or None."""
    if not isinstance(body, dict):
        return None
    betas = betas_of(headers)
    edits = (body.get("context_management") or {}).get("edits") or []
    for index, edit in enumerate(edits):
        kind = edit.get("type")
        beta = EDIT_BETAS.get(kind)
        if beta is None:
            return f"context_management.edits.{index}.type: unknown edit {kind!r}"
        if beta not in betas:
            return f"context_management: {kind} requires the anthropic-beta header {beta!r}"
        if kind == "clear_thinking_20251015" and index != 0:
            return "context_management: clear_thinking_20251015 must be the first edit"
        if kind == "compact_20260112":
            value = (edit.get("trigger") or {}).get("value", 150_000)
            if value < MIN_COMPACTION_TRIGGER:
                return (f"context_management.edits.{index}.trigger.value: must be at least "
                        f"{MIN_COMPACTION_TRIGGER}")
    if has_compaction_block(body.get("messages")) and "compact-2026-01-12" not in betas:
        return "messages: compaction blocks require the anthropic-beta header 'compact-2026-01-12'"
    found = count_breakpoints([body.get("tools"), body.get("system"), body.get("messages")])
    if found > MAX_CACHE_BREAKPOINTS:
        return (f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
                f"provided. Found {found}.")
    return None


def _unmark_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
              for b in content]
    marked = any(isinstance(b, dict) and "cache_control" in b for b in content)
    if marked and len(blocks) == 1 and blocks[0].get("type") == "text" and set(blocks[0]) == {
            "type", "text"}:
        return blocks[0]["text"]  # a plain string the provider turned into a marked block
    return blocks


def unmarked(body: Any) -> Any:
    """A request body with its ``cache_control`` markers taken out: a marked system prompt
    (one block, or split at its breakpoint) or single-text message is a plain string again,
    as the agent wrote it."""
    if not isinstance(body, dict):
        return body
    plain = dict(body)
    system = plain.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        # the provider split one system string at its breakpoint: join it back
        plain["system"] = "".join(b.get("text", "") for b in system)
    if isinstance(plain.get("messages"), list):
        plain["messages"] = [{**m, "content": _unmark_content(m.get("content"))}
                             if isinstance(m, dict) else m for m in plain["messages"]]
    return plain
