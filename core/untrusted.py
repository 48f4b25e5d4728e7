"""Reading a file ctxlab did not write: refuse what is no file, cap what is read, parse safely.

The manifest, its index, scenarios, sessions, recordings, transcripts and ``ctxlab.toml``
may all have been written by someone else. The mistakes and attacks are the same for each:
a FIFO that never ends (an ``open`` or ``read`` that blocks forever), ``/dev/zero`` (a read
that fills memory), a file larger than anything sane, and JSON nested so deeply that the
parser — or the code walking the result — runs out of stack. Each becomes one
:class:`UntrustedFileError` whose message names the file, never a hang or a traceback.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAX_DEPTH = 200  # deeper than any message, record or setting ctxlab reads (tool inputs included)


class UntrustedFileError(ValueError):
    """A file that cannot be read as what it claims to be; the message is one line."""


def file_kind(mode: int) -> str:
    """What a file that is no regular file is, in words ("a FIFO (named pipe)", …)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_limited(path: str | Path, max_bytes: int, *, follow_links: bool = True,
                 label: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, or one clear error.

    The file is opened non-blocking (a FIFO cannot hang the open), checked on the open
    descriptor (no race with a rename), and read at most one byte past the cap, so a file
    that grows while being read is refused too. ``follow_links=False`` is for the
    harness's own files, where a link is never legitimate.
    """
    name = label or str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UntrustedFileError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UntrustedFileError(f"{name}: is a directory") from None
    except OSError as exc:
        if not follow_links and exc.errno == getattr(os, "ELOOP", 40):
            raise UntrustedFileError(f"{name}: is a symbolic link; it is not read") from None
        raise UntrustedFileError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UntrustedFileError(f"{name}: is {file_kind(mode)}, not a file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise UntrustedFileError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise UntrustedFileError(f"{name}: is larger than {max_bytes:,} bytes, the most "
                                 "ctxlab reads from such a file")
    return data


def parse_json(text: str | bytes, source: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` whose every failure is one :class:`UntrustedFileError` naming ``source``.

    Nesting past ``max_depth`` is refused even where the parser would cope, because the
    code that walks the value afterwards (measuring, copying, dumping) recurses too.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise UntrustedFileError(f"{source}: is nested too deeply to read") from None
    except MemoryError:
        raise UntrustedFileError(f"{source}: is too large to read") from None
    except UnicodeDecodeError as exc:
        raise UntrustedFileError(f"{source}: is not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        decode = exc if isinstance(exc, json.JSONDecodeError) else None
        where = f" (line {decode.lineno}, column {decode.colno})" if decode else ""
        msg = decode.msg if decode else str(exc)
        raise UntrustedFileError(f"{source}: is not valid JSON: {msg}{where}") from None
    if too_deep(value, max_depth):
        raise UntrustedFileError(f"{source}: is nested more than {max_depth} levels deep")
    return value


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Does ``value`` nest lists and dicts more than ``limit`` levels? (No recursion.)"""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, dict | list))
    return False
