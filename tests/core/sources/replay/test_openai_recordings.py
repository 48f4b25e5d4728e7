"""Watch recordings of OpenAI traffic replay like Messages recordings.

watch-codex-0.171.0 holds the very requests Codex 0.171 sent to the stand-in in the runs
whose rollouts are codex-0.171.0/*-compaction.jsonl, each with the stand-in's final
Response, as recording lines (``"api": "responses"``). So the recording and the rollout
must tell the same story: the same requests with the same usage, and Codex's compaction
found on the request after its compaction call, that call never a turn.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.events import Emitter, Recorder, Stage
from core.sources.replay import load_recording
from core.sources.replay.original import as_sent
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import (
    CHAT,
    FIXTURES,
    WATCHED_CODEX,
    WATCHED_CODEX_REMOTE,
)
from tests.core.sources.replay.test_codex_real import digest, in_messages_terms, stand_in

RUNS = [(WATCHED_CODEX, "local-compaction"), (WATCHED_CODEX_REMOTE, "remote-compaction")]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(("path", "name"), RUNS)
def test_every_turn_has_the_usage_the_stand_in_reported(path, name):
    recording = load_recording(path)
    assert recording.format == "requests" and recording.agent == "codex"
    turns = [r for r in stand_in("codex-0.171.0", name) if r["kind"] == "turn"]
    assert [e.usage for e in recording.exchanges] == \
        [in_messages_terms(r["usage"]) for r in turns]


@pytest.mark.parametrize(("path", "name"), RUNS)
def test_the_compaction_is_found_on_the_request_after_its_call(path, name):
    recording = load_recording(path)
    calls = stand_in("codex-0.171.0", name)
    [compaction] = recording.compactions
    assert (compaction.by, compaction.trigger, compaction.pre_tokens) == ("codex", "auto",
                                                                          50_000)
    assert compaction.line == 2  # the compaction call's line; it is no exchange
    assert [e.line for e in recording.exchanges] == [1, 3, 4, 5]
    assert compaction.usage == in_messages_terms(calls[1]["usage"])
    assert digest(compaction.kept) == calls[2]["input"]


@pytest.mark.parametrize(("path", "name"), RUNS)
def test_the_recording_and_the_rollout_are_the_same_history(path, name):
    recorded = load_recording(path)
    rolled = load_recording(FIXTURES / "codex-0.171.0" / f"{name}.jsonl")
    assert [digest(h.messages) for _, h in as_sent(recorded)] == \
        [digest(h.messages) for _, h in as_sent(rolled)]
    assert [e.reply for e in recorded.exchanges] == [e.reply for e in rolled.exchanges]
    # the rollout's local summary is the one Codex sent on ("Another language model…")
    assert rolled.compactions[0].summary.endswith(recorded.compactions[0].summary)
    assert recorded.system.startswith("You are a coding agent running in the Codex CLI")


def test_a_local_compactions_summary_is_what_the_summary_call_answered():
    [compaction] = load_recording(WATCHED_CODEX).compactions
    assert compaction.summary.startswith("SUMMARY 2: the user asked to run the check")


def test_the_replay_shows_codexs_stage_and_writes_its_summary(tmp_path):
    source = ReplaySource(load_recording(WATCHED_CODEX_REMOTE),
                          ReplayOptions(workdir=tmp_path))
    events = Recorder()
    assert asyncio.run(source.run(Emitter(sinks=[events])))
    [stage] = [s for s in events.of(Stage) if s.by == "codex"]
    assert (stage.stage, stage.after_messages) == ("auto_compact", 1)
    assert "encrypted" in (tmp_path / stage.files[0]).read_text(encoding="utf-8")


def test_a_responses_compact_call_is_the_agents_compaction(tmp_path):
    lines = rows(WATCHED_CODEX_REMOTE)
    call = lines[1]
    call["api"] = "responses.compact"
    call["request"]["input"] = call["request"]["input"][:-1]  # no compaction_trigger
    call["request"].pop("client_metadata")  # any client: no Codex metadata
    call["response"] = {"output": call["response"]["output"],
                        "usage": call["response"]["usage"]}
    recording = load_recording(write(tmp_path / "r.jsonl", lines))
    [compaction] = recording.compactions
    assert compaction.line == 2 and len(recording.exchanges) == 4
    assert compaction.summary.startswith("Codex's summary is encrypted")


def test_a_line_without_api_is_told_by_its_input(tmp_path):
    lines = rows(WATCHED_CODEX)
    for line in lines:
        line.pop("api")
    recording = load_recording(write(tmp_path / "r.jsonl", lines))
    assert len(recording.exchanges) == 4 and len(recording.compactions) == 1


def test_previous_response_id_continues_the_history_the_server_kept(tmp_path):
    first = rows(WATCHED_CODEX)[0]
    second = copy.deepcopy(first)
    second["request"]["input"] = [{"type": "function_call_output", "call_id": "call_1",
                                   "output": "probe-1\n"}]
    second["request"]["previous_response_id"] = first["response"]["id"]
    second["response"]["id"] = "resp_next"
    recording = load_recording(write(tmp_path / "r.jsonl", [first, second]))
    assert recording.compactions == []
    assert digest(recording.exchanges[1].input) == ["user:result:call_1"]
    assert len(recording.exchanges[1].sent) == 3  # the first request, its reply, the output
    assert [n for n in recording.notices if n.kind == "previous_response_missing"] == []


def test_a_previous_response_the_file_lacks_is_said_and_the_history_starts_at_the_input(
        tmp_path):
    line = rows(WATCHED_CODEX)[0]
    line["request"]["previous_response_id"] = "resp_elsewhere"
    recording = load_recording(write(tmp_path / "r.jsonl", [line]))
    [notice] = [n for n in recording.notices if n.kind == "previous_response_missing"]
    assert notice.line == 1 and "'resp_elsewhere'" in notice.message
    assert "the server held the earlier history, which the file does not have" in \
        notice.message
    [exchange] = recording.exchanges
    assert exchange.sent == exchange.input  # nothing made up in front of it


def test_requests_are_told_from_data_sets_by_what_a_request_holds(tmp_path):
    """A string ``input`` is a request beside a ``model`` or on a line naming its ``api``;
    alone (a data set's row, forced with ``--format requests``) it is skipped and said."""
    lines = [{"model": "gpt-5", "input": "first"},
             {"api": "responses", "request": {"input": "second"}},
             {"input": "What is 2+2?", "output": "4"}]
    recording = load_recording(write(tmp_path / "r.jsonl", lines), "requests")
    assert [(c.first_line, c.label) for c in recording.conversations] == [
        (1, "first"), (2, "second")]  # two requests, apart: the second does not extend it
    [notice] = [n for n in recording.notices if n.kind == "malformed"]
    assert notice.line == 3
    assert "is not a request body" in notice.message


def test_chat_completions_become_messages_with_their_usage():
    recording = load_recording(CHAT)
    assert recording.system.startswith("You are a careful shell assistant")
    first, second, third = recording.exchanges
    assert first.reply["content"] == [{"type": "tool_use", "id": "call_a1", "name": "run",
                                       "input": {"cmd": "wc -l notes.txt"}}]
    assert second.input[0]["content"] == [{"type": "tool_result", "tool_use_id": "call_a1",
                                           "content": "42 notes.txt"}]
    assert second.usage["cache_read_input_tokens"] == 64 and \
        second.usage["input_tokens"] == 96  # OpenAI counts the cached part in the prompt
    assert third.input[0]["content"][1]["type"] == "image"  # told without "api"
    assert [e.stop_reason for e in recording.exchanges] == ["tool_calls", "stop", "stop"]
    assert recording.compactions == []


def test_a_bad_item_skips_its_line_with_a_reason(tmp_path):
    lines = rows(CHAT)
    lines[0]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = 7
    recording = load_recording(write(tmp_path / "r.jsonl", lines))
    assert any("name is a int" in n.message and n.line == 1 for n in recording.notices)
    assert len(recording.exchanges) == 2


def test_a_prewarm_call_is_a_side_call_not_a_turn(tmp_path):
    """Codex marks a call that only warms a connection ``request_kind: prewarm`` in its turn
    metadata: it belongs to no history, so the replay is the one without it."""
    lines = rows(WATCHED_CODEX)
    warm = copy.deepcopy(lines[0])
    metadata = warm["request"]["client_metadata"]
    turn = json.loads(metadata["x-codex-turn-metadata"])
    metadata["x-codex-turn-metadata"] = json.dumps({**turn, "request_kind": "prewarm"})
    warm["request"]["input"] = warm["request"]["input"][:2]
    recording = load_recording(write(tmp_path / "warm.jsonl", [warm, *lines]))
    plain = load_recording(WATCHED_CODEX)
    assert recording.side_calls == 1
    assert [e.usage for e in recording.exchanges] == [e.usage for e in plain.exchanges]
    assert len(recording.compactions) == len(plain.compactions)
