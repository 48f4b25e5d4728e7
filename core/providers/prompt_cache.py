"""Prompt-cache breakpoints on ctxlab's main requests, the way production harnesses set them.

The API caches the prefix of a request up to each ``cache_control`` marker, in the order
tools → system → messages. ctxlab marks two places:

* the end of the system prompt's stable part: tools and system are cached together (they
  change only when the rules files or recalled memories do); the work log, which changes
  every call, follows in a text block of its own after the marker;
* the last content block of the last message: the whole stable history, so the next call
  (which only appends) reads it back from the cache.

The caller's lists are never changed: the marked request is a copy. A block that cannot
carry a marker (thinking, an empty text) is skipped for the nearest earlier one.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL: dict[str, Any] = {"type": "ephemeral"}
UNMARKABLE = {"thinking", "redacted_thinking"}


def cached_system(system: str, stable: int | None = None) -> list[dict[str, Any]]:
    """The system prompt as text blocks, the breakpoint after its stable part: a part that
    changes every call (ctxlab's work log) goes in a block of its own after the marker, so
    tools and the rest of the system prompt are still read back from the cache."""
    if stable is None or not 0 < stable < len(system):
        return [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
    return [{"type": "text", "text": system[:stable], "cache_control": dict(EPHEMERAL)},
            {"type": "text", "text": system[stable:]}]


def _markable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") in UNMARKABLE:
        return False
    return not (block.get("type") == "text" and not block.get("text"))


def cached_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with a breakpoint on the last markable block of the last message."""
    if not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        if not content:
            return messages
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = list(content)
    else:
        return messages
    for index in range(len(blocks) - 1, -1, -1):
        if _markable(blocks[index]):
            blocks[index] = {**blocks[index], "cache_control": dict(EPHEMERAL)}
            return [*messages[:-1], {**last, "content": blocks}]
    return messages
