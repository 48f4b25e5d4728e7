"""``edit_file{path, old_text, new_text}``: replace one exact, unique piece of text.

The course replaces the first occurrence; ctxlab insists the text occur exactly once,
because replacing "the first" of several identical lines silently edits the wrong place
and the model never learns. A miss or an ambiguity comes back as an error that says how
many times the text was found, so the model can widen its ``old_text``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, relative, resolve_writable
from core.tools.outcome import ToolOutcome, error
from core.tools.replace import replace_file

SCHEMA: dict[str, Any] = {
    "name": "edit_file",
    "description": "Replace exact text in a file once.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
        },
        "required": ["path", "old_text", "new_text"],
    },
}


def edit_file(root: Path, path: object, old_text: object, new_text: object) -> ToolOutcome:
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        return error("old_text and new_text must be strings", "bad_input")
    if not old_text:
        return error("old_text must not be empty", "bad_input")
    try:
        target = resolve_writable(root, path)
    except PathRefused as exc:
        return error(str(exc), exc.kind)
    rel = relative(root, target)
    if target.exists() and not target.is_file() and not target.is_dir():
        return error(f"{rel} is not a regular file", "not_regular", path=rel)
    try:
        text = target.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return error(f"file not found: {rel}", "not_found", path=rel)
    except IsADirectoryError:
        return error(f"{rel} is a directory", "is_directory", path=rel)
    except UnicodeDecodeError:
        # Editing through replacement characters would corrupt the undecodable bytes.
        return error(f"{rel} is not UTF-8 text; refusing to edit it", "not_text", path=rel)
    except OSError as exc:
        return error(f"cannot read {rel}: {exc.strerror or exc}", "os_error", path=rel)
    count = text.count(old_text)
    if count == 0:
        return error(f"old_text not found in {rel}", "no_match", path=rel)
    if count > 1:
        return error(
            f"old_text occurs {count} times in {rel}; include more surrounding text so it "
            "matches exactly once",
            "not_unique",
            path=rel,
            occurrences=count,
        )
    edited = text.replace(old_text, new_text, 1).encode("utf-8", errors="replace")
    try:
        replace_file(target, edited)  # whole or not at all: a full disk keeps the old text
    except OSError as exc:
        return error(
            f"cannot write {rel}: {exc.strerror or exc}; {rel} is unchanged", "os_error", path=rel
        )
    return ToolOutcome(content=f"Edited {rel}", meta={"path": rel, "replacements": 1})
