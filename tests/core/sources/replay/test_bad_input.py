"""Bad session files: a clear one-line message or a notice, never a traceback."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sources.replay import ReplayError, load_recording
from tests.core.sources.replay.conftest import CLAUDE, CODEX

FORMATS = ("auto", "claude-code", "codex", "messages", "requests")


def copy_lines(tmp_path, source=CLAUDE, name="s.jsonl"):
    path = tmp_path / name
    return path, source.read_text(encoding="utf-8").splitlines()


def test_a_malformed_line_is_reported_with_its_number_and_skipped(tmp_path):
    path, rows = copy_lines(tmp_path)
    rows[9] = rows[9][:40]  # cut in the middle of the file (the queue-operation line)
    path.write_text("\n".join(rows) + "\n")
    rec = load_recording(path)
    [notice] = rec.notices
    assert (notice.kind, notice.line) == ("malformed", 10)
    assert "line 10 is not valid JSON" in notice.message
    assert len(rec.exchanges) == 6
    assert rec.summary_line().startswith("read 26 of 27 lines")


def test_a_truncated_last_line_says_the_file_may_still_be_written(tmp_path):
    path, rows = copy_lines(tmp_path, CODEX)
    path.write_text("\n".join(rows[:-1]) + "\n" + rows[-1][:50])  # no final newline
    rec = load_recording(path)
    [notice] = rec.notices
    assert notice.kind == "truncated" and notice.line == len(rows)
    assert len(rec.exchanges) == 5  # the last reply closes at the end of the file instead


def test_unknown_line_types_are_counted(tmp_path):
    path, rows = copy_lines(tmp_path, CODEX)
    rows.insert(3, json.dumps({"timestamp": "x", "type": "brand_new_kind", "payload": {}}))
    path.write_text("\n".join(rows) + "\n")
    assert load_recording(path).skipped["unknown type 'brand_new_kind'"] == 1


@pytest.mark.parametrize(("content", "message"), [
    (b"", "is empty"),
    (b"\n\n  \n", "is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file"),
    (b"\xff\xfe{\x00\"\x00", "is a binary file"),
    (b"name,size\nfoo,3\n", "not a session ctxlab can replay"),
    (b'{"hello": "world"}\n', "not a session ctxlab can replay"),
    (b"# notes\nnot json at all\n", "not a session ctxlab can replay"),
    # an evaluation data set: an "input" and an "output" are no request a client sent
    (b'{"input": "What is 2+2?", "output": "4"}\n'
     b'{"input": "Capital of France?", "output": "Paris"}\n', "not a session ctxlab can replay"),
])
def test_files_that_are_no_session_get_one_clear_line(tmp_path, content, message):
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    with pytest.raises(ReplayError, match=message) as info:
        load_recording(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "is empty"),
    (b"\n\n  \n", "is empty"),
    (b"\x00\x01\x02garbage\n" * 10, "is a binary file"),
    (b"\xff\xfe{\x00\"\x00", "is a binary file"),
], ids=["empty", "blank", "binary", "utf-16"])
def test_a_format_named_by_the_user_gets_the_same_file_checks(tmp_path, content, message):
    """``--format claude-code`` reads rows as they come, but the file is refused first
    exactly as it is when detected."""
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    with pytest.raises(ReplayError, match=message):
        load_recording(path, "claude-code")


def test_a_directory_names_what_it_holds(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    with pytest.raises(ReplayError, match=r"is a directory; give one session file \(it holds"):
        load_recording(tmp_path)


def test_a_missing_file(tmp_path):
    with pytest.raises(ReplayError, match="no such file"):
        load_recording(tmp_path / "nope.jsonl")


@pytest.mark.parametrize("fmt", ["auto", "claude-code"])
def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path, fmt):
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:  # sparse: 100 MB without writing them
        handle.write(CLAUDE.read_bytes())
        handle.truncate(100_000_000)
    with pytest.raises(ReplayError, match=r"is 100\.0 MB; replay reads sessions up to 64 MB "
                                          r"\(raise the limit with --max-mb\)"):
        load_recording(path, fmt)


def test_a_file_of_another_format_than_asked(tmp_path):
    with pytest.raises(ReplayError, match="no model request found as codex"):
        load_recording(CLAUDE, "codex")


def test_a_messages_file_that_is_not_json(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('[{"role": "user", "content": "hi"},')
    with pytest.raises(ReplayError, match="not valid JSON"):
        load_recording(path)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.one_of(
    st.text(string.printable, max_size=40),
    st.sampled_from(CLAUDE.read_text(encoding="utf-8").splitlines()[:12]),
    st.sampled_from(CODEX.read_text(encoding="utf-8").splitlines()[:12]),
    st.dictionaries(st.sampled_from(["type", "uuid", "parentUuid", "message", "payload",
                                     "messages", "request", "role", "content"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=5),
                              st.lists(st.integers(), max_size=2)), max_size=4
                    ).map(json.dumps)), max_size=12),
    fmt=st.sampled_from(FORMATS))
def test_any_mix_of_lines_gives_a_recording_or_a_replay_error(tmp_path_factory, rows, fmt):
    path = tmp_path_factory.mktemp("h") / "s.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    try:
        rec = load_recording(path, fmt)
    except ReplayError as exc:
        assert "\n" not in str(exc)
    else:
        assert rec.exchanges
