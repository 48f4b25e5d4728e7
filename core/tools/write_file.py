"""``write_file{path, content}``: create or replace a file inside the workspace.

Parent directories are created as needed (as in the course). The text is written as UTF-8
bytes without newline translation, so what the model wrote is what lands on disk — all of
it or none of it (see :mod:`core.tools.replace`): a full disk leaves the old file intact.
Text UTF-8 cannot hold (a lone surrogate) is refused rather than written as ``?``, and a
content over :data:`MAX_WRITE_BYTES` is refused before anything is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, relative, resolve_writable
from core.tools.encoding import NotEncodable, utf8
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

# Far beyond any file a model writes in one call; the bound keeps the encode and the write
# of a runaway content from taking the process's memory.
MAX_WRITE_BYTES = 32 * 1024 * 1024


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
    if len(content) > MAX_WRITE_BYTES:  # a character is at least one byte
        return _too_large(rel, len(content))
    try:
        data = utf8(content, "content")
    except NotEncodable as exc:
        return error(f"{exc}; nothing was written to {rel}", "not_encodable", path=rel)
    if len(data) > MAX_WRITE_BYTES:
        return _too_large(rel, len(data))
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


def _too_large(rel: str, size: int) -> ToolOutcome:
    return error(
        f"content is at least {size:,} bytes; write_file writes at most {MAX_WRITE_BYTES:,} "
        f"bytes per call; nothing was written to {rel}",
        "too_large",
        path=rel,
    )
