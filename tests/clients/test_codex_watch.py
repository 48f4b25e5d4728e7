"""``ctxlab watch`` in front of the real Codex CLI (tests/support/codex_session.py).

What ctxlab says about the sessions must be what Codex did: every Responses call shown with
the usage the model reported, one conversation per thread, the compaction calls named as
such (Codex's local checkpoint summary and its remote ``compaction_trigger``), exactly its
compactions found — each on the request after it, as the client's, with the trigger Codex
gave — and nothing else called one. Watching must change nothing Codex does, and no key may
reach the recording.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.events import Stage, WatchRequest, WatchResponse
from tests.support.codex import CHECKPOINT_ASK, ENCRYPTED, HANDOFF, last_user_text
from tests.support.codex_session import Recorded, Session
from tests.support.messages_server import RecordedRequest
from tests.support.openai_server import RESPONSES


@dataclass
class Call:
    event: WatchRequest
    answer: WatchResponse
    request: RecordedRequest
    stages: list[Stage]

    @property
    def body(self) -> dict[str, Any]:
        return self.request.body

    @property
    def kind(self) -> str:
        """The client's own word for the call (``turn`` or ``compaction``)."""
        return str(json.loads(self.request.headers["x-codex-turn-metadata"])["request_kind"])

    @property
    def thread(self) -> str:
        return self.request.headers["thread-id"]


def calls(codex: Recorded) -> list[Call]:
    """Each Responses call as the watch reported it, beside what Codex sent (in order: Codex
    makes one call at a time)."""
    sent = codex.responses_calls
    answers = {e.id: e for e in codex.events if isinstance(e, WatchResponse)}
    out: list[Call] = []
    for event in codex.events:
        if isinstance(event, WatchRequest) and event.method == "POST" \
                and event.path.endswith(RESPONSES):
            out.append(Call(event, answers[event.id], sent[len(out)], []))
        elif isinstance(event, Stage) and out:
            out[-1].stages.append(event)
    assert len(out) == len(sent)
    return out


def of(codex: Recorded, session: Session) -> list[Call]:
    return [c for c in calls(codex) if c.thread == session.thread_id]


def test_every_run_succeeds_and_watching_changes_nothing(codex: Recorded,
                                                         codex_direct: Recorded):
    for watched, direct in ((codex.local, codex_direct.local),
                            (codex.remote, codex_direct.remote)):
        for run in watched.runs:
            assert run.returncode == 0, run.stderr
        assert [agent_messages(r.lines) for r in watched.runs] == \
            [agent_messages(r.lines) for r in direct.runs]
        assert [used(r.lines) for r in watched.runs] == [used(r.lines) for r in direct.runs]
    assert (codex.work / "count.txt").read_text() == "3\n"  # the patch Codex applied
    shape = [(c.kind, [i.get("type") for i in c.body["input"]][-3:]) for c in calls(codex)]
    direct = [(json.loads(r.headers["x-codex-turn-metadata"])["request_kind"],
               [i.get("type") for i in r.body["input"]][-3:])
              for r in codex_direct.responses_calls]
    assert shape == direct


def agent_messages(lines: list[dict[str, Any]]) -> list[str]:
    return [line["item"]["text"] for line in lines if line.get("type") == "item.completed"
            and line["item"].get("type") == "agent_message"]


def used(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["usage"] for line in lines if line.get("type") == "turn.completed"]


def test_every_call_shows_the_usage_the_model_reported(codex: Recorded):
    for call in calls(codex):
        assert call.answer.status == 200 and call.answer.error is None
        reported = codex.usage_of(call.request)
        assert call.event.api == call.answer.api == "responses"
        assert call.answer.api_usage == reported  # as sent
        assert call.answer.context_tokens == reported["input_tokens"]
        usage = call.answer.usage or {}
        assert usage.get("output_tokens") == reported["output_tokens"], call.answer
        cached = reported["input_tokens_details"]["cached_tokens"]
        fresh = reported["input_tokens"] - cached
        assert usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) == \
            fresh + cached


def test_no_key_reaches_the_recording(codex: Recorded):
    # Codex did send its key, through the watch, to the upstream
    assert {r.headers.get("authorization") for r in codex.responses_calls} == {
        "Bearer sk-test-not-a-key"}
    text = codex.recording.read_text()
    assert "sk-test-not-a-key" not in text
    assert "authorization" not in text.lower()


def test_the_compaction_calls_are_named_and_carry_no_stage(codex: Recorded):
    compactions = [c for c in calls(codex) if c.kind == "compaction"]
    assert len(compactions) == 3  # local auto, local manual, remote auto
    for call in compactions:
        assert call.stages == [] and call.event.removed == 0
    local = [c for c in compactions if c.thread == codex.local.thread_id]
    assert all(last_user_text(c.body["input"]).startswith(CHECKPOINT_ASK) for c in local)
    assert {c.event.purpose for c in local} == {"summary"}  # a summary is asked for
    [remote] = [c for c in compactions if c.thread == codex.remote.thread_id]
    assert remote.body["input"][-1] == {"type": "compaction_trigger"}
    assert remote.event.purpose == "compaction"  # the server compacts; nothing to read


def test_exactly_the_compactions_are_found_on_the_request_after_each(codex: Recorded):
    for session, triggers in ((codex.local, ["auto", "manual"]), (codex.remote, ["auto"])):
        seen = of(codex, session)
        staged = [(i, c) for i, c in enumerate(seen) if c.stages]
        assert [c.stages[0].trigger for _, c in staged] == triggers, \
            [(i, [(s.stage, s.trigger) for s in c.stages]) for i, c in staged]
        for i, call in staged:
            [stage] = call.stages
            assert stage.by == "client"
            assert seen[i - 1].kind == "compaction"  # the compaction call came just before
            # a few small tool calls gave way to one summary: fewer items, though not always
            # fewer characters (Codex's hand-off preamble is longer than three short outputs)
            assert stage.after_messages < stage.before_messages
            items = call.body["input"]
            if session is codex.local:
                assert any(last_user_text([item]).startswith(HANDOFF) for item in items)
            else:
                assert any(item.get("encrypted_content") == ENCRYPTED for item in items)
                assert call.event.encrypted_chars >= len(ENCRYPTED)
                assert f"{len(ENCRYPTED)}" in json.dumps(stage.ledger[-1])


def test_one_conversation_per_thread(codex: Recorded):
    for session in (codex.local, codex.remote):
        turns = {c.event.conversation for c in of(codex, session) if c.kind == "turn"}
        assert len(turns) == 1 and None not in turns
    local, remote = ({c.event.conversation for c in of(codex, s) if c.kind == "turn"}
                     for s in (codex.local, codex.remote))
    assert local != remote


def test_nothing_else_is_a_change(codex: Recorded):
    for call in calls(codex):
        if not call.stages:
            assert call.event.removed == 0 and call.event.rewritten == 0, call.event


def test_the_recording_holds_every_call_with_its_answer(codex: Recorded):
    lines = [json.loads(line) for line in codex.recording.read_text().splitlines()]
    responses = [line for line in lines if line.get("api") == "responses"]
    assert len(responses) == len(codex.responses_calls)
    for line, request in zip(responses, codex.responses_calls, strict=True):
        assert line["request"] == request.body
        assert line["response"]["status"] == "completed"
        assert line["response"]["usage"] == codex.usage_of(request)
