"""``edit_file{path, old_text, new_text}``: replace one exact, unique piece of text.

The course replaces the first occurrence; ctxlab insists the text occur exactly once,
because replacing "the first" of several identical lines silently edits the wrong place
and the model never learns. Overlapping occurrences count: ``"aa"`` in ``"aaa"`` is found
twice, so it is ambiguous too. A miss or an ambiguity comes back as an error that says how
many times the text was found, so the model can widen its ``old_text``.

The whole file is held in memory to edit it, so a file over :data:`MAX_EDIT_BYTES` is
refused with its size (editing a multi-gigabyte file whole ended the run in a
``MemoryError``); ``bash`` tools such as ``sed`` stream such a file instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, relative, resolve_writable
from core.tools.encoding import NotEncodable, utf8
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

# Larger than any source or text file one edits by hand; reading, decoding, replacing and
# encoding hold a few copies of it at once.
MAX_EDIT_BYTES = 32 * 1024 * 1024
# Counting overlapping occurrences stops here: past it the answer (ambiguous) is the same.
MAX_COUNTED = 100


class TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def read_bounded(target: Path, budget: int = MAX_EDIT_BYTES) -> bytes:
    """The file's bytes, or :class:`TooLarge` if it holds more than ``budget``.

    Opened non-blocking and checked on the descriptor, so a FIFO swapped in after the
    caller's checks cannot hang the read; at most one byte past the budget is read, so a
    file that grows meanwhile is refused too."""
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(target))
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file", str(target))
        if info.st_size > budget:
            raise TooLarge(info.st_size)
        os.set_blocking(fd, True)
        chunks, left = [], budget + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > budget:
        raise TooLarge(len(data))
    return data


def occurrences(text: str, old: str, cap: int = MAX_COUNTED) -> int:
    """How often ``old`` occurs in ``text``: 0, 1, or a lower bound above 1. ``str.count``
    skips overlaps, so it alone called ``"aa"`` unique in ``"aaa"``; when it finds one
    occurrence, the overlapping ones are counted too (up to ``cap``)."""
    count = text.count(old)
    if count != 1:
        return count  # none, or already ambiguous without counting overlaps
    pos = text.find(old)
    while count < cap and (pos := text.find(old, pos + 1)) >= 0:
        count += 1
    return count


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
    try:
        utf8(new_text, "new_text")
    except NotEncodable as exc:
        return error(f"{exc}; {rel} is unchanged", "not_encodable", path=rel)
    if target.exists() and not target.is_file() and not target.is_dir():
        return error(f"{rel} is not a regular file", "not_regular", path=rel)
    try:
        text = read_bounded(target).decode("utf-8")
    except TooLarge as exc:
        return error(
            f"{rel} is {exc.size:,} bytes; edit_file edits files of at most "
            f"{MAX_EDIT_BYTES:,} bytes (use bash, e.g. sed, to edit it in a stream)",
            "too_large",
            path=rel,
            file_bytes=exc.size,
        )
    except FileNotFoundError:
        return error(f"file not found: {rel}", "not_found", path=rel)
    except IsADirectoryError:
        return error(f"{rel} is a directory", "is_directory", path=rel)
    except UnicodeDecodeError:
        # Editing through replacement characters would corrupt the undecodable bytes.
        return error(f"{rel} is not UTF-8 text; refusing to edit it", "not_text", path=rel)
    except OSError as exc:
        return error(f"cannot read {rel}: {exc.strerror or exc}", "os_error", path=rel)
    count = occurrences(text, old_text)
    if count == 0:
        return error(f"old_text not found in {rel}", "no_match", path=rel)
    if count > 1:
        many = f"{count}+" if count >= MAX_COUNTED else str(count)
        return error(
            f"old_text occurs {many} times in {rel}; include more surrounding text so it "
            "matches exactly once",
            "not_unique",
            path=rel,
            occurrences=count,
        )
    edited = text.replace(old_text, new_text, 1).encode("utf-8")
    try:
        replace_file(target, edited)  # whole or not at all: a full disk keeps the old text
    except OSError as exc:
        return error(
            f"cannot write {rel}: {exc.strerror or exc}; {rel} is unchanged", "os_error", path=rel
        )
    return ToolOutcome(content=f"Edited {rel}", meta={"path": rel, "replacements": 1})
