"""``write_file{path, content}``: create or replace a file inside the workspace.

Parent directories are created as needed (as in the course). The text is written as UTF-8
bytes without newline translation, so what the model wrote is what lands on disk — all of
it or none of it (see :mod:`core.tools.replace`): a full disk leaves the old file intact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, relative, resolve_writable
from core.tools.outcome import ToolOutcome, error
from core.tools.replace import replace_file

SCHEMA: dict[str, Any] = {
    "name": "write_file",
    "description": "Write content to a file.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}


def write_file(root: Path, path: object, content: object) -> ToolOutcome:
    if not isinstance(content, str):
        return error("content must be a string", "bad_input")
    try:
        target = resolve_writable(root, path)
    except PathRefused as exc:
        return error(str(exc), exc.kind)
    rel = relative(root, target)
    if target.is_dir():
        return error(f"{rel} is a directory", "is_directory", path=rel)
    if target.exists() and not target.is_file():  # a FIFO or device would block the write
        return error(f"{rel} is not a regular file", "not_regular", path=rel)
    data = content.encode("utf-8", errors="replace")
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, data)
    except OSError as exc:
        after = f"{rel} is unchanged" if existed else f"{rel} was not created"
        return error(f"cannot write {rel}: {exc.strerror or exc}; {after}", "os_error", path=rel)
    return ToolOutcome(
        content=f"Wrote {len(data)} bytes to {rel}",
        meta={"path": rel, "bytes": len(data), "created": not existed},
    )
