"""The texts that stand in a history for content ctxlab archived, and how to read them back.

Kept byte for byte as the course writes them (with workspace-relative paths): the
``<persisted-output>`` wrapper of the budget and of ``fit_tool_results``, micro's
``[Earlier tool result saved at …]`` placeholder, and snip's archive marker. Recognising a
shape here says nothing about trust: :class:`~core.archive.store.Archive` decides that.
"""

from __future__ import annotations

import re
from typing import Any

WRAPPER_HEAD = "<persisted-output>\n"
EARLIER_PREFIX = "[Earlier tool result saved at "
_ARCHIVE_MARKER = re.compile(r"\[(\d+) messages archived at (.+)\]")


def wrapper_text(path: str, preview: str) -> str:
    """The course's persisted wrapper, byte for byte (with a relative path)."""
    return f"<persisted-output>\nFull output: {path}\nPreview:\n{preview}\n</persisted-output>"


def earlier_text(path: str) -> str:
    """The micro_compact placeholder, byte for byte (with a relative path)."""
    return f"{EARLIER_PREFIX}{path}]"


def archive_marker_text(count: int, path: str) -> str:
    return f"[{count} messages archived at {path}]"


def pointer_path(content: Any) -> str | None:
    """The path a wrapper or placeholder names, or None if ``content`` is neither shape."""
    if not isinstance(content, str):
        return None
    if content.startswith(WRAPPER_HEAD):
        for line in content.splitlines():
            if line.startswith("Full output: "):
                return line[len("Full output: "):].strip()
        return None
    if content.startswith(EARLIER_PREFIX) and content.endswith("]"):
        return content[len(EARLIER_PREFIX):-1].strip()
    return None


def archive_marker_path(content: Any) -> str | None:
    if not isinstance(content, str):
        return None
    match = _ARCHIVE_MARKER.fullmatch(content)
    return match.group(2) if match else None


