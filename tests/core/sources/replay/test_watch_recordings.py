"""Watch recordings of the real Claude Code 2.1.197: conversations, side calls and the
agent's own compactions (its summary request), read from trimmed copies of real lines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.events import Emitter, ModelRequest, ReplayStart, Stage, TurnStart
from core.sources.replay import ReplayError, load_recording
from core.sources.replay.conversations import same
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE, FIXTURES

WATCH = FIXTURES / "watch-2.1.197"
COMPACTIONS = WATCH / "compactions.jsonl"  # 11 calls: 2 summary requests, auto + /compact
SUBAGENT = WATCH / "subagent.jsonl"  # the main agent and a subagent, interleaved
SUMMARY_PROMPT = "CRITICAL: Respond with TEXT ONLY"


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def played(recording, tmp_path: Path) -> list:
    events: list = []
    source = ReplaySource(recording, ReplayOptions(workdir=tmp_path / "w", seekable=False))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    return events


def test_the_real_session_has_exactly_its_two_compactions_and_no_rewrite():
    rec = load_recording(COMPACTIONS)
    assert rec.agent == "claude-code"
    assert [(c.trigger, c.line) for c in rec.compactions] == [("auto", 4), ("manual", 8)]
    assert [e.line for e in rec.exchanges] == [1, 2, 3, 5, 6, 7, 9, 10, 11]
    for compaction in rec.compactions:
        assert compaction.usage == {"input_tokens": 1200, "output_tokens": 300}
        assert compaction.pre_tokens == 190_000  # the last request before it
        assert compaction.summary.startswith("<analysis>")
        assert compaction.kept[0]["content"][1]["text"].startswith(
            "This session is being continued")


def test_a_summary_request_is_never_a_user_turn(tmp_path):
    rec = load_recording(COMPACTIONS)
    assert not any(SUMMARY_PROMPT in json.dumps(e.input) for e in rec.exchanges)
    events = played(rec, tmp_path)
    turns = [e.request for e in events if isinstance(e, TurnStart)]
    assert not any(SUMMARY_PROMPT in t for t in turns)
    prompts = ("count lines of other.txt", "Now say what the first line was",
               "And the last line?")
    assert [p for p in prompts if any(t.endswith(p) for t in turns)] == list(prompts)
    theirs = [e for e in events if isinstance(e, Stage) and e.by == "claude-code"]
    assert [(s.stage, s.usage["output_tokens"]) for s in theirs] == [
        ("auto_compact", 300), ("manual_compact", 300)]


def test_a_moved_cache_control_or_a_string_for_one_text_block_is_no_change():
    block = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
    assert same({"role": "user", "content": [block]}, {"role": "user", "content": "hi"})
    assert not same({"role": "user", "content": "hi"}, {"role": "user", "content": "ho"})


def test_a_prompt_sent_again_as_a_string_extends_the_history(tmp_path):
    rows = lines(COMPACTIONS)[:3]
    first = rows[1]["request"]["messages"][0]
    first["content"] = [b for b in first["content"] if b["text"].startswith("Read notes")]
    rows[0]["request"]["messages"][0]["content"] = first["content"][0]["text"]  # a string
    for row in rows[2:]:
        row["request"]["messages"][0] = first
    rec = load_recording(write(tmp_path / "r.jsonl", rows))
    assert rec.compactions == [] and len(rec.exchanges) == 3


def test_the_subagent_is_a_conversation_of_its_own_and_the_main_one_is_the_default():
    rec = load_recording(SUBAGENT)
    assert [(c.id, c.requests, c.first_line) for c in rec.conversations] == [
        ("1", 2, 1), ("2", 2, 2)]
    assert rec.conversation == "1" and rec.conversations[0].label.startswith("MAIN-TASK")
    assert [e.line for e in rec.exchanges] == [1, 4] and rec.compactions == []
    assert any(n.kind == "conversation" and "--conversation 2" in n.message
               for n in rec.notices)
    sub = load_recording(SUBAGENT, conversation="2")
    assert [e.line for e in sub.exchanges] == [2, 3] and sub.compactions == []


def test_an_unknown_conversation_or_one_asked_of_a_transcript_is_one_line():
    with pytest.raises(ReplayError, match=r"no conversation '9' \(it holds: 1, 2\)"):
        load_recording(SUBAGENT, conversation="9")
    with pytest.raises(ReplayError, match="requests format"):
        load_recording(CLAUDE, conversation="1")


def test_the_recordings_own_conversation_field_wins(tmp_path):
    rows = lines(SUBAGENT)
    for row in rows:  # the watch's ids, here putting everything in one
        row["conversation"], row["request_id"] = "c-7", "r"
    rec = load_recording(write(tmp_path / "r.jsonl", rows))
    assert [c.id for c in rec.conversations] == ["c-7"] and rec.conversation == "c-7"


def test_side_calls_are_kept_apart_and_never_a_step(tmp_path):
    rows = lines(COMPACTIONS)
    main = rows[1]["request"]
    title = {**main, "tools": [], "max_tokens": 512, "system": "Generate a short title.",
             "messages": [{"role": "user", "content": "Read notes.txt"}]}
    probe = {**main, "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]}
    count = {k: v for k, v in main.items() if k != "max_tokens"} | {"tools": []}
    side = [{"request": body, "response": {"content": [{"type": "text", "text": "x"}],
                                           "usage": {"input_tokens": 9}}}
            for body in (title, probe, count)]
    rec = load_recording(write(tmp_path / "r.jsonl", rows[:2] + side + rows[2:]))
    assert rec.side_calls == 3 and len(rec.conversations) == 1
    assert [c.trigger for c in rec.compactions] == ["auto", "manual"]
    assert any(n.kind == "side_calls" and "count_tokens" in n.message for n in rec.notices)


def test_replay_start_lists_the_conversations(tmp_path):
    events = played(load_recording(SUBAGENT), tmp_path)
    start = next(e for e in events if isinstance(e, ReplayStart))
    assert start.conversation == "1" and [c["id"] for c in start.conversations] == ["1", "2"]
    assert start.to_json()["conversations"][1]["label"].startswith("SUBAGENT-TASK")


def test_tool_results_cleared_in_place_are_the_agents_micro_compaction(tmp_path):
    rows = lines(COMPACTIONS)[:3]
    results = rows[2]["request"]["messages"][2]["content"]
    results[0]["content"] = "[Old tool result content cleared]"
    rec = load_recording(write(tmp_path / "r.jsonl", rows))
    [micro] = rec.compactions
    assert (micro.stage, micro.cleared, micro.line) == (
        "micro_compact", [results[0]["tool_use_id"]], 3)
    assert [m["role"] for m in rec.exchanges[2].input] == ["user"]  # the new result only


def test_a_mid_history_system_note_is_sent_as_is_and_user_text_on_ctxlabs_side(tmp_path):
    rows = lines(COMPACTIONS)[:2]
    note = {"role": "system", "content": "Available agent types for the Agent tool: …"}
    for row in rows:  # as Claude Code 2.1.197 sends it with some models
        row["request"]["messages"].insert(1, note)
    rec = load_recording(write(tmp_path / "r.jsonl", rows))
    first, second = rec.exchanges
    assert [m["role"] for m in first.sent] == ["user", "system"]
    assert [m["role"] for m in first.input] == ["user", "system"]  # as sent
    assert rec.compactions == [] and [m["role"] for m in second.input] == ["user"]
    events = played(rec, tmp_path)
    [first_call, _] = [e for e in events if isinstance(e, ModelRequest)
                       and e.purpose == "main"]
    assert [m["role"] for m in first_call.sent] == ["user"]  # one user turn on ctxlab's side


SUMMARY_ASK = ("CRITICAL: Respond with TEXT ONLY. Your task is to create a detailed summary of "
               "the conversation so far")


def _call(messages: list[dict], response: dict | None) -> dict:
    request = {"model": "claude-x", "system": "s", "max_tokens": 100,
               "tools": [{"name": "x", "input_schema": {}}], "messages": messages}
    return {"request": request, "response": response}


def _answer(text: str, output_tokens: object = 2) -> dict:
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "model": "claude-x", "usage": {"input_tokens": 10, "output_tokens": output_tokens}}


def test_a_compacted_history_of_one_message_after_an_unanswered_summary_call(tmp_path):
    """The summary call failed (an error body) and the agent went on with the summary as
    its only message: a compaction that keeps nothing, not a traceback."""
    hi, yo = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}
    asked = {"role": "user", "content": "more " + SUMMARY_ASK}
    continued = {"role": "user", "content": "This session is being continued from a "
                 "previous conversation. go on"}
    rec = load_recording(write(tmp_path / "r.jsonl", [
        _call([hi], _answer("yo")),
        _call([hi, yo, asked], {"type": "error", "error": {"type": "overloaded_error"}}),
        _call([continued], _answer("ok"))]))
    [compaction] = rec.compactions
    assert compaction.kept == [] and compaction.summary == ""
    assert rec.exchanges[-1].input == [continued]


def test_a_count_that_is_not_a_number_is_left_out_of_the_usage(tmp_path, capsys):
    from tui.cli import main

    hi, yo = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}
    path = write(tmp_path / "r.jsonl", [
        _call([hi], _answer("yo")),
        _call([hi, yo, {"role": "user", "content": "more " + SUMMARY_ASK}],
              _answer("SUMMARY", output_tokens="7")),
        _call([{"role": "user", "content": "This session is being continued from a previous "
                "conversation. go on"}, {"role": "assistant", "content": "k"},
               {"role": "user", "content": "x"}], _answer("ok"))])
    [compaction] = load_recording(path).compactions
    assert compaction.usage == {"input_tokens": 10}
    assert main(["replay", str(path), "--headless", "--workdir", str(tmp_path / "w")]) == 0
    assert "its own call 10 tokens in, 0 out" in " ".join(capsys.readouterr().out.split())
