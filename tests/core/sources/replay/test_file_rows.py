"""A Claude Code session parsed from its file's rows gives what parsing its whole text gave:
the same objects, line numbers, counts and notices (a cut-off last line, malformed lines,
invalid UTF-8 replaced) as the parser that split the whole text first (kept here as the
reference), and a file past the size cap is still refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sources.replay import load_recording
from core.sources.replay.file_rows import Rows, session_head
from core.sources.replay.model import Recording, ReplayError
from core.sources.replay.reading import (
    MAX_DEPTH,
    Line,
    jsonl_objects,
    read_text,
    row_objects,
    skip,
    too_deep,
)
from tests.core.sources.replay.conftest import CLAUDE

PIECES = [b'{"type": "user", "n": 1}', b"", b"   ", b"\r", b'{"broken": ', b"[1, 2]",
          b'{"caf\xc3\xa9": "\xff\xfe"}', b"not json", b'{"deep": ' + b"[" * 300 + b"]" * 300
          + b"}", b'{"a": "\xe2\x82"}']


def reference_objects(text: str, recording: Recording) -> Iterator[Line]:
    """The parser as it was, splitting the whole text first."""
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
        except (RecursionError, MemoryError):
            skip(recording, number, f"line {number} is nested too deeply to read; skipped")
            continue
        except ValueError as exc:
            if index == last - 1 and not text.endswith("\n"):
                recording.note("truncated", f"line {number} (the last) is cut off: the file "
                               "may still be being written; it was skipped", number)
                recording.skipped["malformed"] += 1
            else:
                skip(recording, number, f"line {number} is not valid JSON "
                     f"({getattr(exc, 'msg', exc)}); skipped")
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


def parsed(rows_of: str, path: Path) -> tuple[list[tuple[int, dict]], Recording]:
    recording = Recording(format="claude-code", path=path, agent="claude-code")
    if rows_of == "reference":
        lines = list(reference_objects(read_text(path, 10_000_000), recording))
    elif rows_of == "text":
        lines = list(jsonl_objects(read_text(path, 10_000_000), recording))
    else:
        rows = Rows(path, 10_000_000)
        lines = list(row_objects(rows, lambda: rows.ends_with_newline, recording))
    return [(line.number, line.data) for line in lines], recording


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8), st.booleans())
def test_rows_read_from_the_file_parse_as_the_text_did(tmp_path_factory, pieces, newline):
    path = tmp_path_factory.mktemp("rows") / "s.jsonl"
    first = b'{"type": "first", "pad": "' + b"x" * 9000 + b'"}'  # the sniffed head: text
    data = b"\n".join([first, *pieces]) + (b"\n" if newline else b"")
    path.write_bytes(data)
    want, reference = parsed("reference", path)
    for way in ("text", "rows"):
        got, recording = parsed(way, path)
        assert got == want
        assert recording.notices == reference.notices
        assert (recording.lines_total, recording.lines_read, recording.skipped) == \
            (reference.lines_total, reference.lines_read, reference.skipped)


def test_a_session_read_by_rows_is_the_one_read_whole(monkeypatch):
    import core.sources.replay as replay

    streamed = load_recording(CLAUDE)
    monkeypatch.setattr(replay, "_head_format", lambda path, max_bytes: None)
    whole = load_recording(CLAUDE)  # detected from the whole text, parsed from it
    assert streamed.format == whole.format == "claude-code"
    assert streamed.exchanges == whole.exchanges and streamed.notices == whole.notices
    assert (streamed.lines_total, streamed.lines_read) == (whole.lines_total, whole.lines_read)


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "user"}\n' * 100)
    with pytest.raises(ReplayError, match="larger than 1,000 bytes"):
        list(Rows(path, 1_000))


def test_the_head_is_checked_as_the_whole_text_is(tmp_path):
    empty, binary = tmp_path / "empty.jsonl", tmp_path / "binary.jsonl"
    empty.write_bytes(b"\n \n")
    binary.write_bytes(b"\x00\x01{}")
    for path, why in ((empty, "is empty"), (binary, "is a binary file")):
        with pytest.raises(ReplayError, match=why):
            session_head(path, 1_000)
        with pytest.raises(ReplayError, match=why):
            read_text(path, 1_000)
