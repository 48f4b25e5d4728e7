"""Rollouts the real Codex CLI wrote (0.20.0, 0.58.0, 0.171.0), against what it really sent.

Each rollout was written by ``codex exec`` running two shell commands against a scripted
Responses API stand-in. ``<name>.stand-in.json`` beside it holds, for every request Codex
made, the usage the stand-in reported and the request's input items reduced to their role,
kind and text or call id. Request n reported ``input_tokens`` 1000·n + 7 (of which 100·n
cached), ``output_tokens`` 10 + n; in the compaction rollouts the first response reported
50,000 input tokens, above the ``model_auto_compact_token_limit`` of 20,000, so Codex
compacted before its second request: locally (a custom provider: a summary request) in
0.58 and 0.171 ``local-compaction``, remotely (the built-in provider: a
``compaction_trigger`` answered by an encrypted ``compaction`` item) in ``remote-compaction``.

``resume-and-manual-compaction`` is session L of tests/support/codex_session.py, run
straight against the scripted server: two parallel ``exec_command`` calls, an
``apply_patch`` (a custom tool) whose usage passes the limit, so Codex compacts mid-turn;
``exec resume`` with a second prompt; a manual compaction through ``codex app-server``; a
last prompt on ``exec resume``. Its stand-in file also has each compaction call's trigger,
from Codex's turn metadata.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.compact.breakdown import message_breakdown
from core.events import Emitter, Recorder, Stage
from core.sources.replay import Compaction, Recording, load_recording
from core.sources.replay.original import as_sent
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import FIXTURES

WITH_USAGE = [("codex-0.58.0", "tools"), ("codex-0.58.0", "compaction"),
              ("codex-0.171.0", "tools"), ("codex-0.171.0", "local-compaction"),
              ("codex-0.171.0", "remote-compaction"),
              ("codex-0.171.0", "resume-and-manual-compaction")]
COMPACTING = [("codex-0.58.0", "compaction"), ("codex-0.171.0", "local-compaction"),
              ("codex-0.171.0", "remote-compaction")]
ALL = [*WITH_USAGE, ("codex-0.20.0", "tools")]


def rollout(version: str, name: str) -> Path:
    return FIXTURES / version / f"{name}.jsonl"


def stand_in(version: str, name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / version / f"{name}.stand-in.json").read_text(encoding="utf-8")
    return json.loads(text)


def in_messages_terms(usage: dict[str, Any]) -> dict[str, int]:
    """What the stand-in reported, as replay states usage (cached input apart)."""
    cached = usage["input_tokens_details"]["cached_tokens"]
    return {"input_tokens": usage["input_tokens"] - cached,
            "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
            "output_tokens": usage["output_tokens"],
            "reasoning_output_tokens": usage["output_tokens_details"]["reasoning_tokens"]}


def block_digest(role: str, block: dict[str, Any]) -> str:
    kind = block["type"]
    detail = {"text": lambda: f":{block['text'][:60]}", "tool_use": lambda: f":{block['id']}",
              "tool_result": lambda: f":{block['tool_use_id']}"}.get(kind, lambda: "")()
    name = {"tool_use": "call", "tool_result": "result"}.get(kind, kind)
    return f"{role}:{name}{detail}"


def digest(messages: list[dict[str, Any]]) -> list[str]:
    """A history as the stand-in files spell a request's input."""
    return [block_digest(m["role"], b) for m in messages for b in m["content"]]


@pytest.mark.parametrize(("version", "name"), WITH_USAGE)
def test_every_request_has_the_usage_the_stand_in_reported_in_order(version, name):
    recording = load_recording(rollout(version, name))
    turns = [r for r in stand_in(version, name) if r["kind"] == "turn"]
    assert [e.usage for e in recording.exchanges] == \
        [in_messages_terms(r["usage"]) for r in turns]


@pytest.mark.parametrize(("version", "name"), WITH_USAGE)
def test_the_history_before_each_request_is_what_codex_sent(version, name):
    recording = load_recording(rollout(version, name))
    turns = [r for r in stand_in(version, name) if r["kind"] == "turn"]
    sent = [digest(history.messages) for _, history in as_sent(recording)]
    assert sent == [r["input"] for r in turns]


@pytest.mark.parametrize(("version", "name"), COMPACTING)
def test_the_compaction_is_codexs_with_the_history_it_kept(version, name):
    recording = load_recording(rollout(version, name))
    calls = stand_in(version, name)
    [compaction] = recording.compactions
    assert compaction.by == "codex" and compaction.trigger == "auto"
    assert compaction.pre_tokens == 50_000  # the request that crossed the limit
    compacting = next(r for r in calls if r["kind"] != "turn")
    assert compaction.usage == in_messages_terms(compacting["usage"])  # the call's cost
    after = calls[calls.index(compacting) + 1]
    assert digest(compaction.kept) == after["input"]  # what Codex went on with


@pytest.mark.parametrize(("version", "name"), [("codex-0.58.0", "compaction"),
                                               ("codex-0.171.0", "local-compaction")])
def test_a_local_compaction_keeps_its_summary_and_its_call_is_no_request(version, name):
    recording = load_recording(rollout(version, name))
    [compaction] = recording.compactions
    assert "SUMMARY 2: the user asked to run the check" in compaction.summary
    assert all("SUMMARY" not in str(e.reply) for e in recording.exchanges)


def test_a_remote_compaction_says_its_summary_is_encrypted_and_how_big():
    [compaction] = load_recording(rollout("codex-0.171.0", "remote-compaction")).compactions
    assert compaction.summary.startswith("Codex's summary is encrypted")
    assert "1,206 chars" in compaction.summary
    sealed = compaction.kept[-1]["content"][-1]
    assert sealed["type"] == "compaction" and len(sealed["encrypted_content"]) == 1206


@pytest.mark.parametrize(("version", "name"), COMPACTING)
def test_the_replay_shows_the_compaction_and_writes_its_summary_file(version, name,
                                                                     tmp_path):
    source = ReplaySource(load_recording(rollout(version, name)),
                          ReplayOptions(workdir=tmp_path))
    events = Recorder()
    assert asyncio.run(source.run(Emitter(sinks=[events])))
    [stage] = [s for s in events.of(Stage) if s.by == "codex"]
    assert stage.stage == "auto_compact" and stage.after_messages == 1
    assert stage.before_messages > stage.after_messages
    assert (tmp_path / stage.files[0]).read_text(encoding="utf-8").strip()


@pytest.mark.parametrize(("version", "name"), ALL)
def test_every_line_is_read_or_ignored_by_name(version, name):
    recording = load_recording(rollout(version, name))
    assert not [k for k in recording.skipped if k.startswith("unknown")
                or k == "malformed"]
    assert recording.lines_read == recording.lines_total


@pytest.mark.parametrize("version", ["codex-0.58.0", "codex-0.171.0"])
def test_model_window_and_instructions_follow_the_rollout(version):
    recording = load_recording(rollout(version, "tools"))
    assert recording.model == "gpt-5-codex"
    assert recording.window_tokens == 258_400  # Codex's usable share of the model's window
    if version == "codex-0.171.0":  # base_instructions, then the developer message
        assert recording.system.startswith("You are a coding agent running in the Codex CLI")
        assert "<skills_instructions>" in recording.system


def test_reasoning_is_thinking_sent_back_with_its_encrypted_content():
    first = load_recording(rollout("codex-0.171.0", "tools")).exchanges[0]
    thinking, call = first.reply["content"]
    assert thinking == {"type": "thinking", "thinking": "**Running check 1**",
                        "signature": "gAAAAB" + "r" * 64}
    assert call == {"type": "tool_use", "id": "call_1", "name": "exec_command",
                    "input": {"cmd": "echo probe-1"}}


def test_reasoning_counts_in_the_thinking_category_and_the_sealed_summary_with_summaries():
    recording = load_recording(rollout("codex-0.171.0", "remote-compaction"))
    reply = message_breakdown(recording.exchanges[0].reply)
    assert reply["thinking"] > 64 and reply["tool_calls"] > 0
    kept = message_breakdown(recording.compactions[0].kept[0])
    assert kept["summaries"] > 1206


def test_the_older_layout_is_read_without_usage():
    recording: Recording = load_recording(rollout("codex-0.20.0", "tools"))
    assert recording.format == "codex" and len(recording.exchanges) == 3
    assert all(e.usage is None for e in recording.exchanges)
    assert any(n.kind == "layout" and "older rollout layout" in n.message
               for n in recording.notices)
    # 0.20 did not record its environment context: the rest is what it sent
    sent = [digest(history.messages) for _, history in as_sent(recording)]
    turns = stand_in("codex-0.20.0", "tools")
    assert sent == [[i for i in r["input"] if "environment_context" not in i] for r in turns]
    assert recording.exchanges[0].reply["content"][1]["input"] == \
        {"command": ["bash", "-lc", "echo probe-1"]}


def test_a_compaction_is_a_step_between_the_requests_around_it():
    steps = load_recording(rollout("codex-0.171.0", "local-compaction")).steps
    assert [type(s).__name__ for s in steps] == \
        ["Exchange", "Compaction", "Exchange", "Exchange", "Exchange"]
    assert isinstance(steps[1], Compaction)
    assert steps[1].input[0]["content"][0]["type"] == "tool_result"  # dropped by it


def test_resumed_runs_and_a_manual_compaction_replay_as_one_session():
    name = "resume-and-manual-compaction"
    recording = load_recording(rollout("codex-0.171.0", name))
    calls = stand_in("codex-0.171.0", name)
    compacting = [i for i, r in enumerate(calls) if r["kind"] == "compaction"]
    assert [calls[i]["trigger"] for i in compacting] == ["auto", "manual"]
    assert [r["input"][-1] for r in calls if r["kind"] == "turn"][-1] == \
        "user:text:And the last line?"
    assert len(recording.compactions) == 2
    for compaction, index in zip(recording.compactions, compacting, strict=True):
        assert compaction.usage == in_messages_terms(calls[index]["usage"])
        kept, sent_next = digest(compaction.kept), calls[index + 1]["input"]
        assert kept == sent_next[:len(kept)]  # and then the new prompt, after /compact
        assert sent_next[len(kept):] in ([], ["user:text:And the last line?"])
        assert compaction.pre_tokens == calls[index - 1]["usage"]["input_tokens"]
        # the rollout does not say a compaction was the user's: both read as automatic
        assert compaction.trigger == "auto"
    patch = recording.exchanges[1].reply["content"][0]
    assert patch["name"] == "apply_patch" and patch["input"]["input"].startswith(
        "*** Begin Patch")
