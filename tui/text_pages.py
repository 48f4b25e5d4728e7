"""A text too long for one viewer, in parts: every character reachable, one part on screen.

A TextArea takes time in proportion to its text to load and to wrap again on every resize:
about half a second for 300,000 chars and three seconds for 3,000,000, the whole app frozen
meanwhile. So the viewer never holds more than one part (:data:`PART_CHARS`), and ``n`` /
``p`` move between parts. A file is read a part at a time, from its start each time (UTF-8
has no char offsets to seek to): reading past the earlier parts is fast, and only the part
shown is ever held.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PART_CHARS = 300_000


@dataclass(frozen=True)
class Parts:
    """``count`` parts of at most :data:`PART_CHARS` chars, ``total`` chars in all; ``read(i)``
    gives part ``i`` (0-based)."""

    count: int
    total: int
    read: Callable[[int], str]

    def bounds(self, index: int) -> tuple[int, int]:
        """The first and last char (1-based) of part ``index``, for the note."""
        return index * PART_CHARS + 1, min((index + 1) * PART_CHARS, self.total)


def text_parts(text: str) -> Parts:
    """A text already in memory (a tool's result), sliced."""
    return Parts(max(-(-len(text) // PART_CHARS), 1), len(text),
                 lambda i: text[i * PART_CHARS:(i + 1) * PART_CHARS])


def file_parts(path: Path) -> Parts:
    """A file, counted once by reading it through, then read a part at a time."""
    total = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        while chunk := fh.read(PART_CHARS):
            total += len(chunk)

    def read(index: int) -> str:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for _ in range(index):
                if not fh.read(PART_CHARS):
                    return ""
            return fh.read(PART_CHARS)

    return Parts(max(-(-total // PART_CHARS), 1), total, read)
