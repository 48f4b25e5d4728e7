"""Every watched model call appended to ``.ctxlab/watch/<time>.jsonl``: the requests format.

One JSON object per line, ``{"request": …, "response": …}`` plus ``request_id`` (the watch's
number of the exchange), ``conversation`` (the id the watch gave its conversation) and
timing: ``request`` is the body exactly as the client sent it, ``response`` the final
Message (assembled from the stream, or the JSON body; an error body for an error). An
OpenAI call's line also says its ``api`` (``responses``, ``responses.compact``,
``chat.completions``; a Messages line has none, as before), and its ``response`` is the
final Response or the ``chat.completion`` assembled from the chunks. A client
stage's ledger says ``"where": "request N"`` and names its conversation, so the body that
held what went is the line with that ``request_id``. No headers are written, so no key or
token ever reaches the disk. ``ctxlab replay`` opens these files, with those two fields or
without (older recordings).

Each line is written with one ``writev`` of its pieces (the body is never joined into it) on
a file opened for appending, at once, so a crash loses at most the exchange in flight, and
a reader never sees half a line before the next one starts.

The folder is reached through :func:`core.harness_paths.harness_dir` and the file opened
with ``O_NOFOLLOW``, on every append: a ``.ctxlab`` or ``watch`` folder (or the file) that
a cloned workspace ships as a link would otherwise have every exchange — every prompt the
client sent — appended outside the workspace.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.harness_paths import check_harness_file, harness_dir, open_no_follow

WATCH_DIR = Path(".ctxlab") / "watch"
_LINE_BREAKS_TO_SPACES = bytes.maketrans(b"\r\n", b"  ")


def recording_name(now: dt.datetime | None = None) -> str:
    """``<UTC time>.jsonl``, a new file per ``watch``."""
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%S%fZ") + ".jsonl"


def raw_record_line(request_json: bytes, response: Any, **timing: Any) -> bytes:
    """One line of the requests format, whole (see :func:`record_pieces`)."""
    return b"".join(record_pieces(request_json, response, **timing))


def record_pieces(request_json: bytes, response: Any, **timing: Any) -> list[bytes | memoryview]:
    """One line of the requests format (``None`` fields of ``timing`` — the request's id,
    conversation and timing — are left out), in pieces for one ``writev``: the request body
    is spliced in byte for byte, never re-serialised nor copied, so the key order and number
    formatting stay the client's, and no 20 MB body is parsed or joined here.
    ``request_json`` must be a UTF-8 JSON object (see ``worker.recordable``); its literal
    line breaks are whitespace and become spaces (a pretty-printed body is the one copied)."""
    request = request_json
    if b"\n" in request or b"\r" in request:  # two memchr scans; compact JSON has neither
        request = request.translate(_LINE_BREAKS_TO_SPACES)
    start, end = _stripped(request)
    fields = {"response": response, **{k: v for k, v in timing.items() if v is not None}}
    rest = json.dumps(fields, ensure_ascii=False)
    try:
        tail = rest[1:].encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate the API spelt "\ud800": kept, escaped
        tail = json.dumps(fields)[1:].encode("ascii")
    return [b'{"request": ', memoryview(request)[start:end], b", " + tail + b"\n"]


_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # what ``bytes.strip()`` takes off


def _stripped(data: bytes) -> tuple[int, int]:
    """The bounds of ``data.strip()``, without the copy."""
    start, end = 0, len(data)
    while start < end and data[start] in _WHITESPACE:
        start += 1
    while end > start and data[end - 1] in _WHITESPACE:
        end -= 1
    return start, end


def utf8_body(raw: bytes) -> bytes:
    """A JSON body that is not strict UTF-8 as UTF-8, each invalid byte (or lone surrogate)
    U+FFFD. Such bytes can only stand inside strings of a body that parsed, so the result is
    the same JSON object with those characters replaced."""
    return raw.decode(json.detect_encoding(raw), errors="replace").encode("utf-8")


REENCODED_NOTE = ("request re-encoded: the body was not valid UTF-8; each invalid byte is "
                  "U+FFFD here (the upstream got it as sent)")


class Recording:
    """An append-only requests-format file under ``root/.ctxlab/watch/``; safe to call from
    several threads."""

    def __init__(self, root: Path, name: str | None = None) -> None:
        self.root = root
        self.path = root / WATCH_DIR / (name or recording_name())
        self._lock = threading.Lock()

    def check(self) -> Path:
        """The recording's folder, made and checked (raises ``HarnessPathError``): a watch
        refuses to start on a planted link instead of recording through it."""
        folder = harness_dir(self.root, WATCH_DIR)
        check_harness_file(folder / self.path.name)
        return folder

    def append(self, line: str | bytes | Sequence[bytes | memoryview]) -> None:
        """Append one line, whole or in pieces (written with one ``writev``)."""
        if isinstance(line, str):
            line = line.encode("utf-8")
        pieces: list[bytes | memoryview] = [line] if isinstance(line, bytes) else list(line)
        with self._lock:
            folder = self.check()  # again: a link can be planted while the watch runs
            fd = open_no_follow(folder / self.path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                _writev_all(fd, pieces)
            finally:
                os.close(fd)


def _writev_all(fd: int, pieces: list[bytes | memoryview]) -> None:
    """``writev`` may write less than asked; go on from where it stopped until every byte
    is down (or it fails)."""
    views = [memoryview(p) for p in pieces if len(p)]
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views.pop(0))
        if written:
            views[0] = views[0][written:]
