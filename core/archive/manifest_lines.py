"""The manifest log's lines: how ctxlab writes them and how a line anyone wrote is read.

Written: every line is one JSON object whose strings are spelt so that nothing in them can
be mistaken for anything but JSON data. A ``tool_use_id`` comes from the model or from a
saved history, so it may hold ``$(touch x)``, backticks, quotes or newlines; in the log
every character of a string outside a small safe set is a ``\\uXXXX`` escape
(:func:`json_string`). The log is data and nothing should ever run it, but if it were
appended to a shell rc file through a planted link (which :mod:`core.harness_paths` now
refuses) or pasted into a terminal, no character of an id would mean anything there.

Read: a line may have been written by anyone with access to the workspace. Each is parsed
on its own terms and anything wrong with it — not JSON, nested too deeply for the parser
(a ``RecursionError`` before), wrong field types, a file outside the archive — becomes a
problem message and the line is skipped; the rest of the log still counts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.archive.content_hash import ALGORITHMS, CONTENT
from core.archive.manifest_index import Batch, key
from core.untrusted import too_deep

MANIFEST = "manifest.jsonl"
LINE_DEPTH = 8  # deeper than any line ctxlab writes (they are flat objects)
NOT_JSON = f"{MANIFEST}: a line that is not JSON is ignored"
TOO_DEEP = f"{MANIFEST}: a line nested too deeply is ignored"

_UNSAFE = re.compile(r"[^A-Za-z0-9 ._:/+=,@-]")


def _escape(match: re.Match[str]) -> str:
    units = match.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def json_string(text: str) -> str:
    """``text`` as a JSON string literal whose every character outside ``[A-Za-z0-9 ._:/+=,@-]``
    is a ``\\uXXXX`` escape (UTF-16 units, so lone surrogates and astral characters too).

    ``json.loads`` reads it back as exactly ``text``; what is left raw cannot start a
    command substitution, a quote, a comment or a new line in a shell, or anything else.
    """
    return f'"{_UNSAFE.sub(_escape, text)}"'


@dataclass(frozen=True)
class Persisted:
    """One file ctxlab saved: what the manifest says about it."""

    path: str  # workspace-relative, "/"-separated
    tool_use_id: str
    chars: int
    digest: str  # hex digest of the file's bytes, by ``algorithm``
    format: str  # "text", "json" (a block list, stored as its JSON) or "transcript"
    algorithm: str = CONTENT  # "blake3", or "sha256" for a line written before it


def sha256_text(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes: for pointer texts and tool_use ids (short strings)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_line(entry: Persisted) -> str:
    """The log line of a file entry: JSON whose strings are spelt by :func:`json_string`.

    Assembled by hand rather than by ``json.dumps`` of a dict, which costs several times
    more, once per file a stage writes (hundreds per ``prepare()``); a test holds that
    ``json.loads`` of the line gives back the entry's object exactly, whatever its strings.
    """
    return (f'{{"path": {json_string(entry.path)}, '
            f'"tool_use_id": {json_string(entry.tool_use_id)}, '
            f'"chars": {int(entry.chars)}, '
            f'{json_string(entry.algorithm)}: {json_string(entry.digest)}, '
            f'"format": {json_string(entry.format)}}}')


def pointer_line(path: str, digest: str) -> str:
    """The log line recording a wrapper's digest for ``path`` (spelt as :func:`entry_line`)."""
    return f'{{"path": {json_string(path)}, "pointer": {json_string(digest)}}}'


def entry_of(obj: Any) -> Persisted | None:
    """The file entry a parsed line holds, or None (a pointer line, or a wrong shape).

    Exact type checks, not ``isinstance``: this runs once per line of a log that can hold
    100,000 lines, and ``json.loads`` makes no subclasses.
    """
    if type(obj) is not dict:
        return None
    for algorithm in ALGORITHMS:
        if algorithm in obj:
            break
    else:
        return None
    path, tid, chars = obj.get("path"), obj.get("tool_use_id"), obj.get("chars")
    digest, fmt = obj[algorithm], obj.get("format")
    if type(path) is str and type(tid) is str and type(chars) is int \
            and type(digest) is str and type(fmt) is str:
        return Persisted(path, tid, chars, digest, fmt, algorithm)
    return None


def rules_fingerprint() -> str:
    """A hash of the code that decides what a file entry is (:func:`entry_of`).

    An index keeps the lines :func:`entry_of` accepted when it was built; if that function
    changes (a new hash field, a renamed one), an index built by the old rules could miss
    lines the new ones accept, so the index is rebuilt. Bytecode, names and constants only:
    moving the code or the checkout rebuilds nothing.
    """
    code = entry_of.__code__
    shape = repr((code.co_code, code.co_consts, code.co_names, code.co_varnames))
    return hashlib.sha256(shape.encode()).hexdigest()[:16]


_SKIP = object()  # a blank or unparsable line: nothing to index


def parse(data: bytes, accept: Callable[[str], bool]) -> Batch:
    """The index rows of ``data``, whole lines of the log (each ending in ``\\n``).

    What is wrong with a line becomes a problem message: not JSON, a file outside the
    archive, an unknown shape. One ``json.loads`` for all lines when every one is whole.
    """
    lines = data.split(b"\n")[:-1]
    batch = Batch()
    try:
        values = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
    except (ValueError, RecursionError):
        values = None  # a bad, blank or deep line somewhere: line by line, each reported
    if values is not None and len(values) == len(lines):
        for line, value in zip(lines, values, strict=True):
            _classify(line, value, accept, batch)
    else:
        for line in lines:
            value = _parse_line(line, batch)
            if value is not _SKIP:
                _classify(line, value, accept, batch)
    return batch


def _parse_line(line: bytes, batch: Batch) -> Any:
    if not line.strip():
        return _SKIP
    try:
        value = json.loads(line)
    except RecursionError:
        batch.problems.append(TOO_DEEP)
        return _SKIP
    except ValueError:  # UnicodeDecodeError and too-long integers included
        batch.problems.append(NOT_JSON)
        return _SKIP
    if too_deep(value, LINE_DEPTH):
        batch.problems.append(TOO_DEEP)
        return _SKIP
    return value


def line_value(line: bytes) -> Any:
    """A stored line parsed again (an index row anyone could have written), or None."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return None if too_deep(value, LINE_DEPTH) else value


def _classify(line: bytes, obj: Any, accept: Callable[[str], bool], batch: Batch) -> None:
    if type(obj) is dict and len(obj) == 2:  # the commonest line first (never an entry)
        path, pointer = obj.get("path"), obj.get("pointer")
        if type(path) is str and type(pointer) is str:
            batch.pointers.append((key(path), key(pointer)))
            return
    entry = entry_of(obj)
    if entry is not None and not accept(entry.path):
        batch.problems.append(f"{MANIFEST}: an entry for a file outside the archive is ignored")
    elif entry is not None:
        batch.entries.append((key(entry.path), line))
    elif isinstance(obj, dict) and isinstance(obj.get("pointer"), str) \
            and isinstance(obj.get("path"), str):
        batch.pointers.append((key(obj["path"]), key(obj["pointer"])))
    else:
        batch.problems.append(f"{MANIFEST}: a line of unknown shape is ignored")
