"""The recording: request bodies spliced in byte for byte, one valid JSON object per line."""

from __future__ import annotations

import json
import os

import pytest

from core.harness_paths import HarnessPathError
from core.sources.watch.exchange import Exchange
from core.sources.watch.recording import Recording, raw_record_line, record_pieces
from core.sources.watch.worker import measure_raw, recordable


def test_a_pretty_printed_body_stays_one_line_and_parses_back(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "line one\nline two"}],
            "max_tokens": 5}
    raw = json.dumps(body, indent=2).encode()  # literal newlines between the keys
    message = {"type": "message", "content": [{"type": "text", "text": "ok"}]}
    recording = Recording(tmp_path, "x.jsonl")
    assert recording.path == tmp_path / ".ctxlab" / "watch" / "x.jsonl"
    recording.append(raw_record_line(raw, message, timestamp="t", status=200, error=None))
    recording.append(raw_record_line(b'{"z": 1, "a": "\xc3\xa9"}', None, status=502))
    lines = recording.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first == {"request": body, "response": message, "timestamp": "t", "status": 200}
    assert second == {"request": {"z": 1, "a": "é"}, "response": None, "status": 502}
    assert lines[1].startswith('{"request": {"z": 1, "a": "é"}')  # the client's key order


def test_only_utf8_json_objects_are_spliced_others_re_encoded():
    assert recordable(b'{"a": 1}', {"a": 1}) == "raw"
    assert recordable(b"[1]", [1]) is None
    utf16 = '{"a": 1}'.encode("utf-16")
    assert recordable(utf16, json.loads(utf16)) == "reencoded"


def test_the_measuring_function_keeps_conversations_per_watch():
    def exchange(n: int, messages: list) -> Exchange:
        body = json.dumps({"model": "m", "messages": messages}).encode()
        return Exchange(id=n, method="POST", path="/v1/messages", body=body, started=0.0)

    one = [{"role": "user", "content": "hi"}]
    two = [*one, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "more"}]
    first, _, ok = measure_raw("watch-a", exchange(1, one))
    second, _, _ = measure_raw("watch-a", exchange(2, two))
    other, _, _ = measure_raw("watch-b", exchange(1, two))
    assert ok and first.conversation == second.conversation
    assert (second.appended, other.appended) == (2, 3)


@pytest.mark.parametrize("planted", [".ctxlab", ".ctxlab/watch", ".ctxlab/watch/x.jsonl"])
def test_a_planted_link_is_refused_and_nothing_outside_is_written(tmp_path, planted):
    """Before, the recording was opened with ``open("ab")`` after ``mkdir(parents=True)``:
    a linked ``.ctxlab``, ``watch`` folder or recording file had every exchange appended
    outside the workspace."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    target = outside / "target"
    if planted.endswith(".jsonl"):
        (work / ".ctxlab" / "watch").mkdir(parents=True)
        target.write_bytes(b"kept\n")
    else:
        target.mkdir()
        (work / planted).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, work / planted)
    before = sorted((p.relative_to(outside), p.read_bytes() if p.is_file() else b"")
                    for p in outside.rglob("*"))
    recording = Recording(work, "x.jsonl")
    with pytest.raises(HarnessPathError, match="symbolic link"):
        recording.check()
    with pytest.raises(HarnessPathError, match="symbolic link"):
        recording.append(raw_record_line(b'{"messages": []}', None, status=200))
    after = sorted((p.relative_to(outside), p.read_bytes() if p.is_file() else b"")
                   for p in outside.rglob("*"))
    assert after == before


@pytest.mark.parametrize("raw", [
    b'{"a": 1, "b": "\xe6\x95\xb0"}',  # compact: spliced without a copy
    b'{\n  "a": 1,\r\n  "b": [1,\n 2]\n}',  # pretty-printed, LF and CRLF
    b' \t{"a": 1}\n\n',  # whitespace around the object
    b'\n{"a": "x"}\r\n',
])
def test_the_pieces_make_the_line_the_whole_body_made(tmp_path, raw):
    """The line written in pieces is, byte for byte, the line the body joined in made
    before (its line breaks spaces, stripped)."""
    message = {"type": "message", "content": [{"type": "text", "text": "ok\n"}]}
    timing = {"request_id": 3, "conversation": "c1", "status": 200, "error": None}
    before = b"".join((b'{"request": ', raw.translate(bytes.maketrans(b"\r\n", b"  ")).strip(),
                       b", ", json.dumps({"response": message, "request_id": 3,
                                          "conversation": "c1", "status": 200},
                                         ensure_ascii=False)[1:].encode(), b"\n"))
    recording = Recording(tmp_path, "x.jsonl")
    recording.append(record_pieces(raw, message, **timing))
    assert raw_record_line(raw, message, **timing) == before
    assert recording.path.read_bytes() == before
    assert json.loads(before)["request"] == json.loads(raw)


def test_a_short_writev_is_finished(monkeypatch, tmp_path):
    """``writev`` may write less than asked: the rest follows, in order."""
    real = os.writev

    def a_few_bytes(fd, views):
        return real(fd, [bytes(memoryview(views[0])[:3])])

    monkeypatch.setattr(os, "writev", a_few_bytes)
    recording = Recording(tmp_path, "x.jsonl")
    recording.append(record_pieces(b'{"a": "long enough to take several writes"}', None))
    monkeypatch.undo()
    assert json.loads(recording.path.read_bytes())["request"] == {
        "a": "long enough to take several writes"}


def test_the_body_crosses_the_pipe_out_of_band_and_whole():
    """The measuring process gets the body's bytes exactly, beside the pickle, not in it."""
    import io

    from core.sources.watch.worker import _call, _pack, _unpack

    body = b'{"messages": []}' + bytes(range(256)) * 4096
    x = Exchange(id=7, method="POST", path="/v1/messages", body=body, started=1.0,
                 session="s")
    parts = _pack(_call("key", x))
    assert len(parts[1]) < 1000  # the pickle itself is small: the body is beside it
    call = _unpack(io.BytesIO(b"".join(parts)))
    assert call[2].body == b"" and call[2].session == "s" and bytes(call[3]) == body
