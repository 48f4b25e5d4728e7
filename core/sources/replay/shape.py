"""What a message read from another agent's file must look like before it is replayed.

A session file is written by another program, or edited by hand. JSON gives any field any
type, but the replay measures, joins and archives what it reads: a ``text`` that is a
number, a ``tool_use.id`` that is an object or a ``usage`` that is a list used to end the
replay in a traceback halfway through. Every importer asks :func:`content_problem` and
:func:`usage_problem` about what it is about to keep; a line with a problem is skipped
with a notice naming its number and the field, and the rest of the session replays.
"""

from __future__ import annotations

from typing import Any

from core.config import MAX_SETTING as MAX_TOKENS  # beyond it the ratio overflows


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def content_problem(content: Any, where: str = "content") -> str | None:
    """Why ``content`` (a string or a list of blocks) cannot be replayed, or None."""
    if isinstance(content, str) or content is None:
        return None
    if not isinstance(content, list):
        return f"{where} is a {_type(content)}, not text or a list of blocks"
    for index, block in enumerate(content):
        problem = block_problem(block, f"{where}[{index}]")
        if problem:
            return problem
    return None


def block_problem(block: Any, where: str) -> str | None:
    """Why one content block cannot be replayed, or None."""
    if not isinstance(block, dict):
        return f"{where} is a {_type(block)}, not a block"
    kind = block.get("type")
    if not isinstance(kind, str):
        return f"{where}.type is a {_type(kind)}, not text"
    strings: tuple[str, ...] = {
        "text": ("text",), "thinking": ("thinking",), "tool_use": ("id", "name"),
        "tool_result": ("tool_use_id",),
    }.get(kind, ())
    for key in strings:
        if not isinstance(block.get(key), str):
            return f"{where}.{key} ({kind}) is a {_type(block.get(key))}, not text"
    if kind == "thinking" and not isinstance(block.get("signature", ""), str):
        return f"{where}.signature is a {_type(block.get('signature'))}, not text"
    if kind == "tool_use" and not isinstance(block.get("input", {}), dict):
        return f"{where}.input is a {_type(block.get('input'))}, not an object"
    if kind == "tool_result":
        return content_problem(block.get("content"), f"{where}.content")
    return None


def usage_problem(usage: Any, where: str = "usage") -> str | None:
    """Why a recorded ``usage`` cannot be used (not an object, an absurd count), or None."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return f"{where} is a {_type(usage)}, not an object"
    for key, value in usage.items():
        if isinstance(value, int) and not isinstance(value, bool) and \
                not 0 <= value <= MAX_TOKENS:
            return f"{where}.{key} is not a token count (0 to {MAX_TOKENS:.0e})"
    return None


def text_or_none(value: Any) -> str | None:
    """A string field read as given, anything else as absent (a model name, a timestamp)."""
    return value if isinstance(value, str) else None
