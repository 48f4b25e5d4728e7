"""The bodies the real Claude Code CLI 2.1.197 sent, through the watch's measuring.

tests/fixtures/watch/claude-code-2.1.197-requests.json holds every ``POST /v1/messages``
of two sessions run through ``ctxlab watch`` against the scripted server, in order, with
the headers that identify them (session, agent): session A asks for two parallel tool
calls, is resumed and AUTO-compacts (a summary request, then the continued session), then
is compacted by ``/compact`` and resumed once more; session B delegates to a subagent
(the Task tool); the last four are an interactive run (a title call, then the task). Long
strings are cut to their first 520 characters (past the summary instructions' key
sentence), tool definitions to their names and parameter types, and paths are under /tmp:
the shapes are the CLI's own.

The watch must see exactly the two compactions, on the requests after the summary calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.events import Stage, WatchRequest
from core.measure import json_chars
from core.sources.replay import requests_jsonl
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request
from core.sources.watch.recording import Recording, raw_record_line

FIXTURE = Path(__file__).parents[3] / "fixtures" / "watch" / "claude-code-2.1.197-requests.json"


@pytest.fixture(scope="module")
def sent() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def watched(sent: list[dict[str, Any]]) -> list[tuple[WatchRequest, tuple[Any, ...]]]:
    conversations = Conversations()
    out = []
    for number, call in enumerate(sent, start=1):
        headers = call["headers"]
        x = Exchange(id=number, method="POST", path=call["path"],
                     body=json.dumps(call["body"]).encode(), started=0.0,
                     session=headers.get("x-claude-code-session-id"),
                     agent=headers.get("x-claude-code-agent-id"))
        _, event, stages = measure_request(x, conversations)
        out.append((event, stages))
    return out


def test_exactly_the_two_compactions_with_what_went_and_where(sent):
    results = watched(sent)
    events = [e for e, _ in results]
    stages: list[Stage] = [s for _, found in results for s in found]
    assert [(s.stage, s.by) for s in stages] == [("client_summary", "client")] * 2
    at = [n for n, (_, found) in enumerate(results, start=1) if found]
    assert at == [5, 9]  # the requests that start from the summary
    assert all(sent[n - 1]["body"]["messages"][0]["content"][1]["text"].startswith(
        "This session is being continued") for n in at)
    main = events[0].conversation
    auto, manual = stages
    for stage, (where, before_request) in zip(stages, [(3, 3), (7, 7)], strict=True):
        before = sent[before_request - 1]["body"]["messages"]
        assert stage.before_messages == len(before)
        assert stage.before_chars == json_chars(before)
        gone = [e for e in stage.ledger if "message_index" in e]
        assert {e["where"] for e in gone} == {f"request {where}"}
        assert {e["conversation"] for e in stage.ledger} == {main}
    assert (auto.before_messages, auto.after_messages) == (6, 1)
    assert (manual.before_messages, manual.after_messages) == (8, 2)


def test_purposes_and_conversations(sent):
    events = [e for e, _ in watched(sent)]
    purposes = [e.purpose for e in events]
    assert [n for n, p in enumerate(purposes, start=1) if p == "summary"] == [4, 8]
    assert purposes[15] == "title"
    assert {p for n, p in enumerate(purposes, start=1) if n not in (4, 8, 16)} == {"main"}
    conv = [e.conversation for e in events]
    assert len(set(conv[:11])) == 1, "one session, two compactions: one conversation"
    assert conv[11] == conv[14] != conv[12] == conv[13], "the subagent is its own"
    assert len({conv[0], conv[11], conv[12], conv[15], conv[16]}) == 5
    assert [e.removed for e in events] == [0, 0, 0, 0, 6, 0, 0, 0, 6, 0, 0,
                                           0, 0, 0, 0, 0, 0, 0, 0]
    assert not any(e.rewritten for e in events), "cache markers and strings are no change"


def test_system_messages_count_as_system_messages(sent):
    first = watched(sent)[0][0]
    system_message = sent[0]["body"]["messages"][1]
    assert system_message["role"] == "system"
    assert first.breakdown["system_messages"] == json_chars(system_message["content"])


def test_the_recording_carries_the_request_and_conversation_a_ledger_names(sent, tmp_path):
    results = watched(sent)
    recording = Recording(tmp_path, "cc.jsonl")
    for n, (event, _) in enumerate(results, start=1):
        recording.append(raw_record_line(json.dumps(sent[n - 1]["body"]).encode(), None,
                                         request_id=event.id, conversation=event.conversation,
                                         timestamp="t"))
    lines = [json.loads(line) for line in recording.path.read_text().splitlines()]
    assert list(lines[0]) == ["request", "response", "request_id", "conversation",
                              "timestamp"]
    stage = next(s for _, found in results for s in found)
    entry = next(e for e in stage.ledger if "message_index" in e)
    line = next(x for x in lines if f"request {x['request_id']}" == entry["where"])
    assert line["conversation"] == entry["conversation"]
    held = line["request"]["messages"][entry["message_index"]]
    assert json_chars(held) == entry["chars"]
    # and replay reads it, as it reads a line without the two fields
    text = recording.path.read_text()
    old = "\n".join(json.dumps({"request": x["request"], "timestamp": "t"}) for x in lines)
    new, before = requests_jsonl.load(recording.path, text), \
        requests_jsonl.load(recording.path, old)
    assert [c.requests for c in new.conversations] == \
        [c.requests for c in before.conversations] == [11, 2, 2, 3]
    assert [s.line for s in new.steps] == [s.line for s in before.steps]
    assert [c.stage for c in new.compactions] == ["auto_compact", "manual_compact"]
