"""Request bodies that are not valid UTF-8 still leave a recording of valid UTF-8 JSONL.

A client can send a lone surrogate as raw bytes (``\\xed\\xa0\\x80``, which Python's JSON
reader accepts), a stray ``\\xff`` inside a string, or UTF-16. The recording splices UTF-8
bodies in byte for byte; anything else is re-encoded (each invalid byte becomes U+FFFD)
and the entry's ``notes`` say so, so ``ctxlab replay`` still opens the whole recording.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from core.sources.watch.exchange import Exchange
from core.sources.watch.recording import raw_record_line, utf8_body
from core.sources.watch.worker import measure_raw
from tui.cli import main

HEAD = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": '
SURROGATE = HEAD + b'"a\xed\xa0\x80b"}]}'
STRAY = HEAD + b'"caf\xff"}]}'
UTF16 = json.dumps({"model": "m", "max_tokens": 5,
                    "messages": [{"role": "user", "content": "hi"}]}).encode("utf-16")


@pytest.mark.parametrize("raw", [SURROGATE, STRAY, UTF16], ids=["surrogate", "stray", "utf16"])
def test_a_body_that_is_not_utf8_is_measured_and_recorded_re_encoded(raw):
    x = Exchange(id=1, method="POST", path="/v1/messages", body=raw, started=0.0)
    event, _, how = measure_raw("hostile", x)
    assert event.messages == 1 and how == "reencoded"
    line = raw_record_line(utf8_body(raw), None, status=200,
                           notes=["request re-encoded"])
    text = line.decode("utf-8")  # strict: the whole line is valid UTF-8
    record = json.loads(text)
    assert record["request"]["messages"][0]["role"] == "user"
    assert record["notes"] == ["request re-encoded"]


def test_a_valid_utf8_body_is_still_spliced_byte_for_byte():
    raw = '{"messages": [], "z": "é"}'.encode()
    x = Exchange(id=1, method="POST", path="/v1/messages", body=raw, started=0.0)
    assert measure_raw("clean", x)[2] == "raw"


def _post(url: str, body: bytes) -> bytes:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    conn.request("POST", "/v1/messages", body=body,
                 headers={"content-type": "application/json", "x-api-key": "k",
                          "anthropic-version": "2023-06-01"})
    answer = conn.getresponse().read()
    conn.close()
    return answer


def test_a_lone_surrogate_as_raw_bytes_leaves_a_recording_replay_opens(
        watch, messages_server, tmp_path, capsys):
    """Before, the raw bytes were spliced into the line: the recording was invalid UTF-8
    and ``ctxlab replay`` refused the whole file as binary."""
    from core.events import WatchResponse

    for _ in range(3):
        messages_server.reply_text("ok")
    clean = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}'
    for body in (clean, SURROGATE, STRAY):
        _post(watch.url, body)
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 3)
    assert watch.source is not None and watch.source.recording is not None
    path = watch.source.recording.path
    lines = path.read_bytes().decode("utf-8").splitlines()  # strict UTF-8
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert "notes" not in records[0]
    for record in records[1:]:
        assert "\ufffd" in record["request"]["messages"][0]["content"]
        assert any("re-encoded" in note for note in record["notes"])
    capsys.readouterr()
    assert main(["replay", str(path), "--headless", "--json",
                 "--workdir", str(tmp_path / "replay")]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    begin = next(e for e in events if e["type"] == "replay_start")
    # three unrelated one-message calls: three conversations, each replayable on its own
    assert (begin["format"], begin["requests"]) == ("requests", 1)
    assert [c["requests"] for c in begin["conversations"]] == [1, 1, 1]


def test_utf8_is_checked_piece_by_piece_across_character_boundaries():
    from core.sources.watch.worker import _strict_utf8

    text = "é漢😀".encode() * 1000
    assert all(_strict_utf8(text, piece) for piece in (1, 2, 3, 5, 7, 4096))
    assert not any(_strict_utf8(b"ab\xed\xa0\x80cd", piece) for piece in (1, 2, 3, 64))
    assert not _strict_utf8(text + b"\xf0\x9f")  # cut inside the last character


def test_a_response_holding_a_lone_surrogate_is_recorded_escaped():
    """A stream may spell a lone surrogate as a JSON escape; before, the line could not be
    encoded and the exchange was left out of the recording ("not recorded")."""
    line = raw_record_line(b'{"messages": []}', {"content": [{"type": "text",
                                                              "text": "a\ud800b"}]},
                           status=200)
    record = json.loads(line.decode("utf-8"))
    assert record["response"]["content"][0]["text"] == "a\ud800b"
