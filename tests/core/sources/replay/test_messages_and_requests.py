"""Messages JSON and Requests JSONL, and format detection."""

from __future__ import annotations

import json

import pytest

from core.sources.replay import ReplayError, load_recording
from core.sources.replay.detect import detect
from tests.core.sources.replay.conftest import CLAUDE, CODEX, MESSAGES, MESSAGES_BODY, REQUESTS


@pytest.mark.parametrize(("path", "fmt"), [(CLAUDE, "claude-code"), (CODEX, "codex"),
                                           (MESSAGES, "messages"), (MESSAGES_BODY, "messages"),
                                           (REQUESTS, "requests")])
def test_each_format_is_detected(path, fmt):
    assert detect(path, path.read_text(encoding="utf-8")) == fmt


def test_every_assistant_message_of_a_history_is_one_request():
    rec = load_recording(MESSAGES)
    assert len(rec.exchanges) == 3
    assert rec.exchanges[0].input == [{"role": "user",
                                       "content": "Read notes.txt and tell me the deadline."}]
    assert rec.exchanges[1].reply["content"] == [{"type": "text",
                                                  "text": "The deadline is Friday at 17:00."}]


def test_an_object_with_messages_gives_its_system_and_model():
    rec = load_recording(MESSAGES_BODY)
    assert rec.system == "You are terse." and rec.model == "claude-sonnet-4-5"


def test_requests_lines_with_and_without_response():
    rec = load_recording(REQUESTS)
    first, second, third = rec.exchanges
    assert first.usage["input_tokens"] == 620 and first.stop_reason == "tool_use"
    assert first.sent is not None and len(first.sent) == 1
    assert [m["role"] for m in second.input] == ["user"]  # the reply came from the response
    assert third.reply is None  # a bare body: no response recorded
    assert rec.system == "You are a coding agent."


def test_a_request_that_does_not_extend_the_previous_one_is_the_agents_rewrite():
    rec = load_recording(REQUESTS)
    [compaction] = rec.compactions
    assert (compaction.by, compaction.trigger, compaction.pre_tokens) == ("agent", "rewrite", 690)
    assert rec.exchanges[2].input == [{"role": "user", "content": "Thanks."}]
    assert [m["role"] for m in compaction.kept] == ["user", "assistant"]


def test_a_line_that_is_no_request_is_reported_and_skipped(tmp_path):
    text = REQUESTS.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join([text[0], json.dumps({"hello": 1}), text[1]]) + "\n")
    rec = load_recording(path, "requests")
    assert len(rec.exchanges) == 2
    assert [n.line for n in rec.notices] == [2]
    assert rec.summary_line().startswith("read 2 of 3 lines")


def test_a_history_with_no_assistant_message_has_nothing_to_replay(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(ReplayError, match="no model request"):
        load_recording(path)


def test_a_single_line_body_is_a_history_and_two_lines_are_requests(tmp_path):
    body = json.loads(MESSAGES_BODY.read_text(encoding="utf-8"))
    path = tmp_path / "one.json"
    path.write_text(json.dumps(body))
    assert load_recording(path).format == "messages"
    path.write_text(json.dumps(body) + "\n" + json.dumps(body) + "\n")
    assert load_recording(path).format == "requests"
