"""Can a ``<persisted-output>`` wrapper be rebuilt, exactly, from the file it names?

A stage that meets a trusted wrapper may replace it by a bare pointer (``micro_compact``'s
``[Earlier tool result saved at …]``): the preview leaves the context, and only the file is
left to recover it from. So trust must mean "this text holds nothing the file does not".
A recorded digest cannot promise that on its own: the manifest and its index are files in
the workspace, and anything that can write there (the model's ``bash`` included) can append
the digest of "a real wrapper followed by 48 kB of new data"; trusting that and replacing it
by a pointer lost the new data. What no one can forge is the file's verified bytes, so a
wrapper is trusted only when its preview is derived from them:

* the start of the file — what the budget, ``fit_tool_results`` and older versions write;
* or a long command's output cut to its head and tail (``core.tools.bash``): a start of the
  file, the notice ``[output truncated: K of M chars shown]`` whose M is the file's length
  and whose K says how much of the end follows, that end of the file (trailing whitespace
  trimmed, as the tool trims it), and at most the tool's own status lines (an exit code,
  a timeout, stopped background processes) — a few words that say how the command ended.

The caller has verified the file's hash first; this module only reads it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from core.compact.pointers import wrapper_text

_TAIL = "\n</persisted-output>"
_NOTICE = re.compile(r"\n\[output truncated: (\d{1,15}) of (\d{1,15}) chars shown\]")
_STATUS = re.compile(
    r"(?:\nError: Timeout \([0-9.e+-]{1,24}s\): the command and its children were killed)?"
    r"(?:\n\[exit code -?\d{1,6}\])?"
    r"(?:\n\[background processes still held the output open and were stopped\])?")
_MAX_BYTES_PER_CHAR = 4  # UTF-8 (a lone surrogate kept with surrogatepass takes 3)


def wrapper_preview(path: str, content: str) -> str | None:
    """The preview of ``content`` if it is exactly a wrapper naming ``path``, else None."""
    head = wrapper_text(path, "")[: -len(_TAIL)]
    if len(content) >= len(head) + len(_TAIL) and content.startswith(head) \
            and content.endswith(_TAIL):
        return content[len(head): len(content) - len(_TAIL)]
    return None


def rebuilds(file: Path, chars: int, preview: str) -> bool:
    """Is ``preview`` derived from ``file`` (``chars`` characters long) as described above?"""
    try:
        if _head(file, len(preview)) == preview:
            return True
        return any(_head_and_tail(file, chars, preview, notice) for notice in
                   _NOTICE.finditer(preview))
    except (OSError, UnicodeDecodeError):
        return False


def _head_and_tail(file: Path, chars: int, preview: str, notice: re.Match[str]) -> bool:
    kept, total = int(notice.group(1)), int(notice.group(2))
    head = preview[:notice.start()]
    tail_len = kept - len(head)
    if total != chars or not 0 <= tail_len < chars - len(head):
        return False  # the notice must describe this file, and a cut that left a middle
    shown = _tail(file, tail_len).rstrip()
    rest = preview[notice.end():]
    if shown:
        if not rest.startswith("\n" + shown):
            return False
        rest = rest[len(shown) + 1:]
    return _STATUS.fullmatch(rest) is not None and _head(file, len(head)) == head


def _head(file: Path, n: int) -> str:
    with open(file, encoding="utf-8", errors="surrogatepass", newline="") as fh:
        return fh.read(n)


def _tail(file: Path, n: int) -> str:
    """The last ``n`` characters of a UTF-8 file, reading only its end."""
    if n <= 0:
        return ""
    with open(file, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start = max(0, size - n * _MAX_BYTES_PER_CHAR)
        fh.seek(start)
        data = fh.read()
    skip = 0
    while start and skip < len(data) and 0x80 <= data[skip] < 0xC0:
        skip += 1  # started inside a character: begin at the next one
    return data[skip:].decode("utf-8", "surrogatepass")[-n:]
