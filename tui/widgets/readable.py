"""A history message as a person reads it: its texts as written, not as JSON escapes them.

``json.dumps`` of a message puts a whole summary on one line with every newline written
``\\n`` and every quote ``\\"`` — exact, and unreadable. The viewers show this instead: one
heading per content block (text, tool call, tool result) and the block's text as it is,
newlines and quotes included. Only a tool call's input stays JSON (it *is* JSON),
indented. Nothing is shortened here; the viewer decides how much to show.
"""

from __future__ import annotations

import json
from typing import Any

RULE = "── "


def content_text(content: Any) -> str:
    """A tool result's content as text: a string as is, text blocks joined, others as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(json.dumps(block, ensure_ascii=False, indent=2, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, indent=2, default=str)


def block_text(block: Any) -> str:
    """One content block under a heading line that says what it is."""
    if not isinstance(block, dict):
        return f"{RULE}{type(block).__name__}\n{block}"
    kind = block.get("type")
    if kind == "text":
        return f"{RULE}text\n{block.get('text', '')}"
    if kind == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2, default=str)
        return f"{RULE}tool_use {block.get('id', '')} · {block.get('name', '?')}\n{args}"
    if kind == "tool_result":
        error = " · is_error" if block.get("is_error") else ""
        return (f"{RULE}tool_result for {block.get('tool_use_id', '')}{error}\n"
                f"{content_text(block.get('content', ''))}")
    return f"{RULE}{kind}\n" + json.dumps(block, ensure_ascii=False, indent=2, default=str)


def readable_message(message: Any) -> str:
    """``role`` and then every block's text, unescaped; a non-message as indented JSON."""
    if not isinstance(message, dict):
        return json.dumps(message, ensure_ascii=False, indent=2, default=str)
    content = message.get("content")
    head = f"role: {message.get('role', '?')}"
    if isinstance(content, str):
        return f"{head}\n{content}"
    return "\n".join([head, *(block_text(b) for b in content or [])])
