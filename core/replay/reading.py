"""Opening a session file safely: the checks every format shares, and the JSONL reader.

Bad input never becomes a traceback. Before anything is parsed the file is checked for the
usual mistakes — missing, a directory, empty, binary, too large — and each gets its own
one-line :class:`~core.replay.model.ReplayError`. The JSONL reader then skips a malformed
line (reporting its number), and says so apart when the *last* line is cut off, which is
what a session still being written looks like.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.replay.model import Recording, ReplayError

MAX_BYTES = 64_000_000  # a 64 MB Claude Code session is ~27k lines; raise with --max-mb
SNIFF_BYTES = 8192


def check_file(path: Path, max_bytes: int = MAX_BYTES) -> int:
    """The file's size, after refusing what cannot be a session file."""
    if not path.exists():
        raise ReplayError(f"{path}: no such file")
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.jsonl"))[:3]
        hint = f" (it holds {', '.join(found)}…)" if found else ""
        raise ReplayError(f"{path}: is a directory; give one session file{hint}")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if size == 0 or not head.strip():
        raise ReplayError(f"{path}: is empty")
    if b"\x00" in head or not _utf8_prefix(head):
        raise ReplayError(f"{path}: is a binary file, not a JSON or JSONL session")
    if size > max_bytes:
        raise ReplayError(f"{path}: is {size / 1e6:,.1f} MB; replay reads sessions up to "
                          f"{max_bytes / 1e6:,.3g} MB (raise the limit with --max-mb)")
    return size


def _utf8_prefix(data: bytes) -> bool:
    """Is ``data`` UTF-8, allowing a multi-byte character cut at the end of the sample?"""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3 and exc.reason == "unexpected end of data"
    return True


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    check_file(path, max_bytes)
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise ReplayError(f"{path}: cannot be read ({exc.strerror or exc})") from None


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a session file is parsed.

    Parsing builds hundreds of thousands of containers that can never form a reference
    cycle (JSON is a tree; the recording only points down into it), yet each one counts
    towards the collector's next run, and every run re-scans everything still young or
    pending, the growing recording included: a 30 MB session spent about a sixth of its
    import in the collector, and that share grew with the file (profiled: import CPU per
    MB 5.5 ms at 1 MB, 9 ms at 30 MB; 7.3 ms at 30 MB with the collector paused). The
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


def jsonl_objects(text: str, recording: Recording) -> Iterator[Line]:
    """Every JSON object line of ``text``; bad lines become notices on ``recording``.

    Counts go to ``recording.lines_total`` (non-blank lines) and ``lines_read`` (objects).
    """
    rows = text.split("\n")
    last = len(rows)
    while last > 0 and not rows[last - 1].strip():
        last -= 1
    for index in range(last):
        raw = rows[index]
        if not raw.strip():
            continue
        recording.lines_total += 1
        number = index + 1
        try:
            data = json.loads(raw)
        except ValueError as exc:
            if index == last - 1 and not text.endswith("\n"):
                recording.note("truncated", f"line {number} (the last) is cut off: the file "
                               "may still be being written; it was skipped", number)
            else:
                recording.note("malformed", f"line {number} is not valid JSON ({exc.msg}); "
                               "skipped", number)
            recording.skipped["malformed"] += 1
            continue
        if not isinstance(data, dict):
            recording.note("malformed", f"line {number} is not a JSON object; skipped", number)
            recording.skipped["malformed"] += 1
            continue
        recording.lines_read += 1
        yield Line(number, data)


def first_object(text: str) -> Any:
    """The first JSON value of the first non-blank line (None when it does not parse)."""
    for raw in text.split("\n", 50)[:50]:
        if raw.strip():
            try:
                return json.loads(raw)
            except ValueError:
                return None
    return None
