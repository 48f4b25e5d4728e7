"""``read_file{path, limit}``: a file's text, whole unless a line limit is asked for.

There is deliberately no size cap here: shrinking big results is the compaction pipeline's
job (it persists the original byte-exact and keeps a preview), and a cap in the tool would
lose text before that pipeline could archive it. Bytes that are not UTF-8 are decoded with
replacement characters so a stray binary file cannot crash the turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, relative, resolve_in_workspace
from core.tools.outcome import ToolOutcome, error

SCHEMA: dict[str, Any] = {
    "name": "read_file",
    "description": "Read file contents.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
}


def parse_limit(value: object) -> int | None:
    """``None`` for "whole file"; a positive int otherwise. Numeric strings are accepted
    because models sometimes send ``"50"`` for an integer field."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("limit must be a positive integer")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"limit must be a positive integer, got {value!r}")
    return value


def first_lines(text: str, limit: int) -> tuple[str, int]:
    """The first ``limit`` lines (line ends kept) and how many lines were left out."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= limit:
        return text, 0
    rest = len(lines) - limit
    head = "".join(lines[:limit])
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}... ({rest} more lines)", rest


def read_file(root: Path, path: object, limit: object = None) -> ToolOutcome:
    try:
        target = resolve_in_workspace(root, path)
        max_lines = parse_limit(limit)
    except PathRefused as exc:
        return error(str(exc), exc.kind)
    except ValueError as exc:
        return error(str(exc), "bad_input")
    rel = relative(root, target)
    if target.is_dir():
        return error(f"{rel} is a directory", "is_directory", path=rel)
    if target.exists() and not target.is_file():  # a FIFO or device would block the read
        return error(f"{rel} is not a regular file", "not_regular", path=rel)
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return error(f"file not found: {rel}", "not_found", path=rel)
    except OSError as exc:
        return error(f"cannot read {rel}: {exc.strerror or exc}", "os_error", path=rel)
    text = data.decode("utf-8", errors="replace")
    meta: dict[str, Any] = {"path": rel, "bytes": len(data)}
    if max_lines is not None:
        text, omitted = first_lines(text, max_lines)
        meta["omitted_lines"] = omitted
    return ToolOutcome(content=text, meta=meta)
