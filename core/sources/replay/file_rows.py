"""A JSONL session read row by row from its file, never held whole.

A Claude Code session is parsed into one object per line, and its conversation is only
known once every line is in (the file is a tree: the chain runs back from the last reply).
Holding the file's text as well while its lines are parsed made the import's peak memory
the file twice over plus the parsed records. :func:`session_head` reads just enough to
refuse a bad file and detect the format (the checks :func:`~.reading.read_text` makes, on
the same bytes), and :func:`file_rows` then yields the rows as they are read.

Each row is decoded on its own, as ``read_text`` decodes the whole (UTF-8, an invalid byte
replaced): a newline byte never belongs to a multi-byte character, so the rows, and any
replacement characters, are the ones splitting the decoded text gives.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from core.sources.replay.model import ReplayError
from core.sources.replay.reading import SNIFF_BYTES, check_file, check_head
from core.untrusted import file_kind

HEAD_ROWS = 50  # detection reads the first object among the first 50 rows
_CHUNK = 1 << 20


@dataclass
class Rows:
    """The rows of a file as it is read; ``ends_with_newline`` is known once they are all
    read (a last line without one may be cut off: a session still being written)."""

    path: Path
    max_bytes: int
    ends_with_newline: bool = True

    def __iter__(self) -> Iterator[str]:
        read = 0
        last = b"\n"
        with _open_regular(self.path) as handle:
            for raw in handle:
                read += len(raw)
                if read > self.max_bytes:
                    raise ReplayError(f"{self.path}: is larger than {self.max_bytes:,} bytes, "
                                      "the most ctxlab reads from such a file")
                last = raw
                yield raw.removesuffix(b"\n").decode("utf-8", errors="replace")
        self.ends_with_newline = last.endswith(b"\n")


def _open_regular(path: Path) -> BinaryIO:
    """The file opened for reading in binary, after checking on the open descriptor that
    it is a regular file (opened non-blocking, so a FIFO swapped in cannot hang it)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ReplayError(f"{path}: is {file_kind(mode)}, not a file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb", buffering=_CHUNK)


def session_head(path: Path, max_bytes: int) -> str:
    """The first ``HEAD_ROWS`` rows of the file (all of it if shorter), decoded, after the
    checks ``read_text`` makes: missing, a directory, not a regular file, too large, empty,
    binary."""
    check_file(path, max_bytes)
    data = b""
    with _open_regular(path) as handle:
        while data.count(b"\n") < HEAD_ROWS or len(data) < SNIFF_BYTES:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            data += chunk
    check_head(path, data[:SNIFF_BYTES])
    cut = _after_rows(data, HEAD_ROWS)
    return data[:cut].decode("utf-8", errors="replace")


def _after_rows(data: bytes, rows: int) -> int:
    """Where the first ``rows`` rows of ``data`` end (all of ``data`` if it has fewer)."""
    end = -1
    for _ in range(rows):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return len(data)
    return end + 1
