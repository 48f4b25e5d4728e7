"""Opening a session file safely: the checks every format shares, and the JSONL reader.

Bad input never becomes a traceback. Before anything is parsed the file is checked for the
usual mistakes — missing, a directory, empty, binary, too large — and each gets its own
one-line :class:`~core.sources.replay.model.ReplayError`. The JSONL reader then skips a malformed
line (reporting its number), and says so apart when the *last* line is cut off, which is
what a session still being written looks like.
"""

from __future__ import annotations

import gc
import json
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.sources.replay.model import Recording, ReplayError
from core.untrusted import MAX_DEPTH, UntrustedFileError, file_kind, read_limited, too_deep

MAX_BYTES = 64_000_000  # a 64 MB Claude Code session is ~27k lines; raise with --max-mb
SNIFF_BYTES = 8192


def check_file(path: Path, max_bytes: int = MAX_BYTES) -> int:
    """The file's size, after refusing what cannot be a session file.

    ``stat`` never opens the file, so a FIFO or a device is named for what it is before
    anything could block on it or read it forever (``/dev/zero`` is not "empty").
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ReplayError(f"{path}: no such file") from None
    except OSError as exc:
        raise ReplayError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        found = sorted(p.name for p in path.glob("*.jsonl"))[:3]
        hint = f" (it holds {', '.join(found)}…)" if found else ""
        raise ReplayError(f"{path}: is a directory; give one session file{hint}")
    if not stat.S_ISREG(info.st_mode):
        raise ReplayError(f"{path}: is {file_kind(info.st_mode)}, not a session file")
    if info.st_size > max_bytes:
        raise ReplayError(f"{path}: is {info.st_size / 1e6:,.1f} MB; replay reads sessions "
                          f"up to {max_bytes / 1e6:,.3g} MB (raise the limit with --max-mb)")
    return info.st_size


def _utf8_prefix(data: bytes) -> bool:
    """Is ``data`` UTF-8, allowing a multi-byte character cut at the end of the sample?"""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3 and exc.reason == "unexpected end of data"
    return True


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The session's text, read at most ``max_bytes`` (plus one) from a regular file.

    The read itself goes through :func:`core.untrusted.read_limited`, which checks the
    open descriptor again: a file swapped for a FIFO after the ``stat`` still cannot hang
    the read, and one that grows past the cap while read is refused.
    """
    check_file(path, max_bytes)
    try:
        data = read_limited(path, max_bytes)
    except UntrustedFileError as exc:
        raise ReplayError(str(exc)) from None
    check_head(path, data[:SNIFF_BYTES])
    return data.decode("utf-8", errors="replace")


def check_head(path: Path, head: bytes) -> None:
    """Refuse a file whose first ``SNIFF_BYTES`` are blank or not UTF-8 text."""
    if not head.strip():
        raise ReplayError(f"{path}: is empty")
    if b"\x00" in head or not _utf8_prefix(head):
        raise ReplayError(f"{path}: is a binary file, not a JSON or JSONL session")


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a session file is parsed.

    Parsing builds hundreds of thousands of containers that can never form a reference
    cycle (JSON is a tree; the recording only points down into it), yet each one counts
    towards the collector's next run, and every run re-scans everything still young or
    pending, the growing recording included, so the share of the import spent collecting
    grew with the file (docs/PERFORMANCE.md, "Replay", has the profile). The
    objects are still freed by reference counting; the collector's one pass over them
    happens after the import. The previous state is restored, so a caller that had
    already disabled the collector keeps it disabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    data: dict[str, Any]


def text_rows(text: str) -> Iterator[str]:
    """``text.split("\n")`` one row at a time (a 60 MB session is not copied into a list)."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def jsonl_objects(text: str, recording: Recording) -> Iterator[Line]:
    """Every JSON object line of ``text``; bad lines become notices on ``recording``."""
    return row_objects(text_rows(text), lambda: text.endswith("\n"), recording)


def row_objects(rows: Iterable[str], ends_with_newline: Callable[[], bool],
                recording: Recording) -> Iterator[Line]:
    """Every JSON object among ``rows``; bad lines become notices on ``recording``.

    Counts go to ``recording.lines_total`` (non-blank lines) and ``lines_read`` (objects).
    A line that does not parse is judged once the next non-blank line (or the end) is
    reached: the last one, in a file not ending with a newline, is cut off rather than
    malformed. ``ends_with_newline`` is asked only at the end, after every row was read.
    """
    failed: tuple[int, ValueError] | None = None
    number = 0
    for raw in rows:
        number += 1
        if not raw.strip():
            continue
        if failed is not None:
            _malformed(recording, *failed)
            failed = None
        recording.lines_total += 1
        try:
            data = json.loads(raw)
        except (RecursionError, MemoryError):
            skip(recording, number, f"line {number} is nested too deeply to read; skipped")
            continue
        except ValueError as exc:
            failed = (number, exc)
            continue
        if not isinstance(data, dict):
            skip(recording, number, f"line {number} is not a JSON object; skipped")
            continue
        if too_deep(data, MAX_DEPTH):
            # Measuring, copying and dumping the history recurse: refuse it at the door.
            skip(recording, number, f"line {number} is nested more than {MAX_DEPTH} levels "
                 "deep; skipped")
            continue
        recording.lines_read += 1
        yield Line(number, data)
    if failed is None:
        return
    if ends_with_newline():
        _malformed(recording, *failed)
        return
    number = failed[0]
    recording.note("truncated", f"line {number} (the last) is cut off: the file may still "
                   "be being written; it was skipped", number)
    recording.skipped["malformed"] += 1


def _malformed(recording: Recording, number: int, exc: ValueError) -> None:
    skip(recording, number, f"line {number} is not valid JSON "
         f"({getattr(exc, 'msg', exc)}); skipped")


def skip(recording: Recording, number: int, message: str) -> None:
    """A line that cannot be used: a ``malformed`` notice with its number, and counted."""
    recording.note("malformed", message, number)
    recording.skipped["malformed"] += 1


def first_object(text: str) -> Any:
    """The first JSON value of the first non-blank line (None when it does not parse).

    A line nested too deeply to parse is passed over: it will be skipped as any other
    line, and the format is whatever the next line says.
    """
    for raw in text.split("\n", 50)[:50]:
        if raw.strip():
            try:
                return json.loads(raw)
            except (RecursionError, MemoryError):
                continue
            except ValueError:
                return None
    return None
