"""``ctxlab watch`` in front of the real Claude Code CLI (tests/support/claude_code_session.py).

What ctxlab says about the session must be what Claude Code did: one conversation per
session (and one for its subagent), its two summary calls recognised as such, exactly its
two compactions (the automatic one and ``/compact``) found on the request after each, with a
ledger that points into the recording, and nothing else called a compaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.events import Stage, WatchRequest, WatchResponse
from core.measure import json_chars
from tests.support.claude_code import SUMMARY_ASK, last_user_text
from tests.support.claude_code_session import SUBAGENT, Recorded
from tests.support.messages_server import MESSAGES


@dataclass
class Call:
    event: WatchRequest
    body: dict[str, Any]
    session: str
    stages: list[Stage]

    @property
    def summary_request(self) -> bool:
        return SUMMARY_ASK in last_user_text(self.body["messages"])

    @property
    def subagent(self) -> bool:
        return SUBAGENT in json.dumps(self.body["messages"][0])


def calls(claude: Recorded) -> list[Call]:
    """Each Messages call as the watch reported it, beside the body the client sent: found
    by its measure, since the interactive CLI sends its title call beside its turn."""
    sent = [r for r in claude.requests if r.path == MESSAGES]
    out: list[Call] = []
    for event in claude.events:
        if isinstance(event, WatchRequest) and event.path.endswith(MESSAGES):
            request = next(r for r in sent if json_chars(r.body["messages"]) == event.chars)
            sent.remove(request)
            out.append(Call(event, request.body,
                            request.headers["x-claude-code-session-id"], []))
        elif isinstance(event, Stage) and out:
            out[-1].stages.append(event)
    assert not sent
    return out


def test_every_run_succeeds_and_the_proxy_changes_nothing(claude: Recorded):
    for run in claude.runs:
        assert run.returncode == 0, run.stderr
        result = run.lines[-1]
        assert result["type"] == "result" and result["subtype"] == "success", result
    assert claude.calls.count("summary") == 2  # the auto compaction and /compact
    assert [r.lines[-1]["result"] for r in claude.runs] == [
        "notes.txt has 3 lines.", "notes.txt has 3 lines.", "",
        "notes.txt has 3 lines.", "The subagent counted 3 lines."]
    # usage reached the client exactly as the model reported it
    assert claude.runs[0].lines[-1]["usage"]["input_tokens"] == 3_000 + 5_000 + 190_000
    answered = [e for e in claude.events if isinstance(e, WatchResponse)]
    assert answered and all(e.status == 200 and e.error is None for e in answered)


def test_no_key_reaches_the_recording(claude: Recorded):
    text = claude.recording.read_text()
    assert "sk-ant-test-not-a-key" not in text
    assert "x-api-key" not in text


def test_the_summary_requests_are_summaries_with_no_stage(claude: Recorded):
    summaries = [c for c in calls(claude) if c.summary_request]
    assert len(summaries) == 2
    for call in summaries:
        assert call.event.purpose == "summary"
        assert call.stages == [] and call.event.removed == 0


def test_exactly_the_two_compactions_are_found_on_the_request_after_each(claude: Recorded):
    seen = calls(claude)
    staged = [(i, c) for i, c in enumerate(seen) if c.stages]
    assert len(staged) == 2, [(i, [s.stage for s in c.stages]) for i, c in staged]
    for i, call in staged:
        [stage] = call.stages
        assert stage.stage == "client_summary" and stage.by == "client"
        assert seen[i - 1].summary_request  # the summary call came just before
        assert stage.after_chars < stage.before_chars
        assert "continued from a previous conversation" in json.dumps(call.body["messages"][0])


def test_one_conversation_per_session_and_one_for_the_subagent(claude: Recorded):
    main_a, main_b, sub = set(), set(), set()
    session_a, session_b = claude.runs[0].session_id, claude.runs[-1].session_id
    for call in calls(claude):
        if call.summary_request or call.event.purpose != "main":
            continue
        if call.session == session_a:
            main_a.add(call.event.conversation)
        elif call.subagent:
            sub.add(call.event.conversation)
        elif call.session == session_b:
            main_b.add(call.event.conversation)
    assert len(main_a) == len(main_b) == len(sub) == 1
    assert len(main_a | main_b | sub) == 3


def test_the_interactive_title_call_is_a_side_call(claude: Recorded):
    session_a = claude.runs[0].session_id
    titles = [c for c in calls(claude) if not c.body.get("tools")]
    assert titles and all(c.session != session_a for c in titles)
    assert {c.event.purpose for c in titles} == {"title"}
    assert all(not c.stages and c.event.removed == 0 for c in titles)


def test_a_ledger_entry_can_be_followed_into_the_recording(claude: Recorded):
    lines = [json.loads(line) for line in claude.recording.read_text().splitlines()]
    by_id = {line["request_id"]: line for line in lines}
    for call in calls(claude):
        for stage in call.stages:
            wheres = {entry["where"] for entry in stage.ledger if "where" in entry}
            assert wheres, stage.ledger
            for where in wheres:
                number = int(where.split()[-1])
                line = by_id[number]
                assert line["conversation"] == call.event.conversation
                # the request it names is the one before the compaction, with the history
                # the summary replaced
                assert len(line["request"]["messages"]) == stage.before_messages


def test_nothing_else_is_a_change(claude: Recorded):
    """Claude Code moves ``cache_control`` to the newest block on every call and sends a
    prompt as a block list one time and as a string the next: neither is a change."""
    for call in calls(claude):
        if not call.stages:
            assert call.event.removed == 0 and call.event.rewritten == 0, call.event


def test_system_role_messages_count_as_system(claude: Recorded):
    first = calls(claude)[0]
    system_messages = [m for m in first.body["messages"] if m["role"] == "system"]
    assert system_messages  # Claude Code 2.1.197 sends its agent listing this way
    listing = len(system_messages[0]["content"])
    assert first.event.breakdown["system"] > listing
    assert first.event.breakdown.get("text", 0) < listing
