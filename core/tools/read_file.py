"""``read_file{path, offset, limit}``: a file's text, whole up to a size cap.

Shrinking big results is the compaction pipeline's job (it persists the original byte-exact
and keeps a preview), so the tool itself cuts nothing a model could want from an ordinary
file. It does read at most :data:`MAX_READ_BYTES` per call, streaming the file rather than
loading it: reading a multi-gigabyte log whole took about three times its size in memory
and ended in a ``MemoryError`` or the OOM killer. A capped read ends with a note naming the
lines shown, the file's size and the ``offset`` that continues it, so the rest is one call
away; what was shown goes through the pipeline (and its archive) like any big result.

``offset`` is the 1-based line to start at and ``limit`` how many lines to show (the names
and meaning of Claude Code's Read tool). Reaching an offset means counting newlines from
byte 0, so that scan is bounded too: it reads at most :data:`SCAN_BUDGET` bytes (an offset
past them is answered with how far the scan got and the ``bash`` command that starts
there), and it stops at its next chunk when the caller sets its ``stop`` event (the tool
runner does when the turn is cancelled: a worker thread cannot be stopped from outside).
Bytes that are not UTF-8 are decoded with replacement characters so a stray binary file
cannot crash the turn.
"""

from __future__ import annotations

import codecs
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.tools.confine import PathRefused, relative, resolve_in_workspace
from core.tools.outcome import ToolOutcome, error

SCHEMA: dict[str, Any] = {
    "name": "read_file",
    "description": "Read file contents.",
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
        },
        "required": ["path"],
    },
}

MAX_READ_BYTES = 4 * 1024 * 1024
# How far past the shown lines a limited read looks to say how many lines it left out.
COUNT_BUDGET = 16 * 1024 * 1024
# How many bytes a read scans to reach its ``offset`` (an ordinary log is far smaller).
SCAN_BUDGET = 256 * 1024 * 1024
_CHUNK = 1024 * 1024


def parse_limit(value: object, name: str = "limit", minimum: int = 1) -> int | None:
    """``None`` when absent; an int ≥ ``minimum`` otherwise. Numeric strings are accepted
    because models sometimes send ``"50"`` for an integer field."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive integer")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


@dataclass
class Window:
    """The bytes one call shows: whole lines from ``first_line``. ``capped`` says the byte
    cap ended it; ``cut`` that even its first line did not fit, so it ends part-way
    through that line."""

    data: bytes
    start_byte: int
    first_line: int
    lines: int
    capped: bool
    cut: bool
    more: bool


@dataclass
class Scan:
    """How a scan for an offset ended: ``found`` newlines in ``scanned`` bytes, and
    ``stopped`` (``"budget"`` or ``"cancelled"``) if it ended before finding them all."""

    found: int
    scanned: int
    stopped: str | None = None


def skip_lines(
    fh: BinaryIO,
    count: int,
    budget: int | None = None,
    stop: threading.Event | None = None,
) -> Scan:
    """Move past ``count`` newlines in bounded chunks, reading at most ``budget`` bytes
    and checking ``stop`` before each chunk."""
    scan = Scan(0, 0)
    while scan.found < count:
        if stop is not None and stop.is_set():
            scan.stopped = "cancelled"
            break
        size = _CHUNK if budget is None else min(_CHUNK, budget - scan.scanned)
        if size <= 0:
            scan.stopped = "budget" if _peek(fh) else None
            break
        start = fh.tell()
        chunk = fh.read(size)
        if not chunk:
            break
        scan.scanned += len(chunk)
        pos = -1
        while scan.found < count:
            pos = chunk.find(b"\n", pos + 1)
            if pos < 0:
                break
            scan.found += 1
        if scan.found == count and pos >= 0:
            fh.seek(start + pos + 1)
    return scan


def _peek(fh: BinaryIO) -> bool:
    """Whether a byte follows, without moving."""
    pos = fh.tell()
    more = bool(fh.read(1))
    fh.seek(pos)
    return more


def read_window(fh: BinaryIO, first_line: int, max_lines: int | None, cap: int) -> Window:
    """Whole lines from ``first_line``: at most ``max_lines`` of them and ``cap`` bytes."""
    start_byte = fh.tell()
    buf = bytearray()
    lines, capped, cut = 0, False, False
    while max_lines is None or lines < max_lines:
        room = cap - len(buf)
        if room <= 0:
            capped = True
            break
        line = fh.readline(room)
        if not line:
            break
        if line.endswith(b"\n") or not _peek(fh):  # a whole line, or the last one
            buf += line
            lines += 1
            continue
        capped = True  # the cap fell inside this line
        if lines:
            fh.seek(-len(line), os.SEEK_CUR)  # it starts the next window instead
        else:
            buf += line
            cut = True
        break
    return Window(bytes(buf), start_byte, first_line, lines, capped, cut, _peek(fh))


def count_lines_left(
    fh: BinaryIO, budget: int, stop: threading.Event | None = None
) -> int | None:
    """Lines after the current position, or ``None`` if that would mean reading past
    ``budget`` bytes (a limited read of a huge file must not scan all of it) or the
    caller set ``stop``."""
    count, read, last = 0, 0, b"\n"
    while chunk := fh.read(_CHUNK):
        if stop is not None and stop.is_set():
            return None
        read += len(chunk)
        if read > budget:
            return None
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def decode(data: bytes, cut: bool) -> tuple[str, int]:
    """UTF-8 with replacement, and how many trailing bytes were held back: a cut window
    keeps a multi-byte character split by the cap for the next read rather than showing it
    as a replacement character."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(data, final=not cut)
    return text, len(decoder.getstate()[0])


def read_file(
    root: Path,
    path: object,
    limit: object = None,
    offset: object = None,
    *,
    max_bytes: int = MAX_READ_BYTES,
    scan_budget: int | None = None,
    stop: threading.Event | None = None,
) -> ToolOutcome:
    try:
        target = resolve_in_workspace(root, path)
        max_lines = parse_limit(limit)
        start = parse_limit(offset, "offset", minimum=0) or 1
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
        with open(target, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            budget = SCAN_BUDGET if scan_budget is None else scan_budget
            scan = skip_lines(fh, start - 1, budget, stop)
            if scan.stopped or scan.found < start - 1:
                return _scan_ended(rel, size, start, scan, budget)
            window = read_window(fh, start, max_lines, max_bytes)
            left = None
            if window.more and not window.capped:
                left = count_lines_left(fh, COUNT_BUDGET, stop)
    except FileNotFoundError:
        return error(f"file not found: {rel}", "not_found", path=rel)
    except OSError as exc:
        return error(f"cannot read {rel}: {exc.strerror or exc}", "os_error", path=rel)
    return _outcome(rel, size, window, left, max_bytes)


def _scan_ended(rel: str, size: int, start: int, scan: Scan, budget: int) -> ToolOutcome:
    """The answer when the scan for ``offset`` did not reach it: past the end, out of
    budget (saying how far it got, and how to go on from there), or cancelled."""
    meta: dict[str, Any] = {"path": rel, "lines_found": scan.found, "scanned_bytes": scan.scanned}
    if scan.stopped == "cancelled":
        return error(f"reading {rel} was cancelled", "cancelled", **meta)
    if scan.stopped == "budget":
        return error(
            f"read_file scans at most {budget:,} bytes to reach an offset; the first "
            f"{scan.scanned:,} bytes of {rel} ({size:,} bytes in all) hold {scan.found:,} "
            f"lines, so line {start:,} starts further on. bash `tail -c +{scan.scanned + 1} "
            f"{rel} | head -c {MAX_READ_BYTES}` shows what follows",
            "scan_budget",
            file_bytes=size,
            **meta,
        )
    return error(
        f"offset {start} is past the end of {rel} ({scan.found + 1} lines)",
        "bad_input",
        path=rel,
    )


def _outcome(rel: str, size: int, window: Window, left: int | None, cap: int) -> ToolOutcome:
    text, held_back = decode(window.data, window.cut)
    meta: dict[str, Any] = {"path": rel, "bytes": len(window.data)}
    if window.first_line > 1:
        meta["offset"] = window.first_line
    if not window.more:
        return ToolOutcome(content=text, meta=meta)
    last = window.first_line + window.lines - 1
    nxt = last + 1
    if window.capped:
        meta.update(capped=True, file_bytes=size, next_offset=nxt)
        note = f"read_file shows at most {cap:,} bytes per call"
        if window.cut:
            nxt = last + 2  # line ``last + 1`` was cut part-way
            meta["next_offset"] = nxt
            resume = window.start_byte + len(window.data) - held_back + 1
            note += (
                f"; line {last + 1} is longer than that and was cut at byte {resume - 1:,} "
                f"(bash `tail -c +{resume} {rel} | head -c {cap}` shows more of it)"
            )
        shown = f"part of line {last + 1}" if window.cut else f"lines {window.first_line}-{last}"
        text += "" if text.endswith("\n") else "\n"
        text += (
            f"... ({note}. Shown: {shown} of {rel} ({size:,} bytes in all); continue with "
            f"offset={nxt})"
        )
        return ToolOutcome(content=text, meta=meta)
    if not text.endswith("\n"):
        text += "\n"
    meta["next_offset"] = nxt
    if left is None:
        meta["omitted_lines"] = None
        return ToolOutcome(
            content=f"{text}... (more lines follow; continue with offset={nxt})", meta=meta
        )
    meta["omitted_lines"] = left
    return ToolOutcome(content=f"{text}... ({left} more lines)", meta=meta)
