"""The rollouts the real Codex CLI wrote replay whole: every request's history and usage
as Codex sent them, and its compactions with the history it kept and a summary file.

The sessions are tests/support/codex_session.py's (run once per test run): session L
compacts locally twice (automatically mid-turn, then manually through ``codex
app-server``) across three ``codex exec`` runs of one thread; session R compacts remotely.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.sources.replay import Recording, load_recording
from core.sources.replay.openai_bodies import turn_metadata, usage_of
from core.sources.replay.original import as_sent
from core.sources.replay.responses_items import items_to_messages
from tests.support.codex_session import Recorded, Session
from tests.support.messages_server import RecordedRequest
from tui.cli import main

SESSIONS = {"local": 2, "remote": 1}  # the compactions each session made


def session(codex: Recorded, name: str) -> Session:
    return codex.local if name == "local" else codex.remote


def calls_of(codex: Recorded, name: str) -> list[RecordedRequest]:
    """The session's Responses calls, in order (its thread is the prompt cache key)."""
    thread = session(codex, name).thread_id
    return [c for c in codex.responses_calls if c.body.get("prompt_cache_key") == thread]


def kind(call: RecordedRequest) -> str:
    return str((turn_metadata(call.body) or {}).get("request_kind"))


def sent(call: RecordedRequest) -> list[dict[str, Any]]:
    """The history a call sent, as replay spells messages."""
    return items_to_messages(call.body["input"]).messages


def blocks(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Every block with its role, in order: neighbours of one role are one message to the
    API (Codex's kept history and the prompt after a manual compaction are two items)."""
    return [(m["role"], b) for m in messages for b in m["content"]]


def replayed(codex: Recorded, name: str) -> Recording:
    return load_recording(session(codex, name).rollout)


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_every_request_has_the_usage_the_server_reported(codex, name):
    turns = [c for c in calls_of(codex, name) if kind(c) == "turn"]
    recording = replayed(codex, name)
    assert [e.usage for e in recording.exchanges] == \
        [usage_of(codex.usage_of(c)) for c in turns]


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_the_history_before_every_request_is_what_codex_sent(codex, name):
    turns = [c for c in calls_of(codex, name) if kind(c) == "turn"]
    histories = [blocks(h.messages) for _, h in as_sent(replayed(codex, name))]
    assert histories == [blocks(sent(c)) for c in turns]


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_each_compaction_keeps_what_codex_went_on_with_and_costs_its_call(codex, name):
    calls = calls_of(codex, name)
    compacting = [i for i, c in enumerate(calls) if kind(c) == "compaction"]
    recording = replayed(codex, name)
    assert len(recording.compactions) == len(compacting) == SESSIONS[name]
    for compaction, index in zip(recording.compactions, compacting, strict=True):
        assert compaction.by == "codex"
        assert compaction.usage == usage_of(codex.usage_of(calls[index]))
        kept, after = blocks(compaction.kept), blocks(sent(calls[index + 1]))
        assert kept == after[:len(kept)]
        assert compaction.summary


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_ctxlab_replay_shows_codexs_stages_and_writes_their_summaries(codex, name, tmp_path,
                                                                      capsys):
    rollout = session(codex, name).rollout
    code = main(["replay", str(rollout), "--headless", "--json", "--workdir",
                 str(tmp_path)])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and events[-1]["type"] == "run_end"
    stages = [e for e in events if e["type"] == "stage" and e["by"] == "codex"]
    assert len(stages) == SESSIONS[name]
    for stage in stages:
        assert stage["stage"] == "auto_compact" and stage["usage"]
        assert (tmp_path / stage["files"][0]).read_text(encoding="utf-8").strip()
    responses = [e for e in events if e["type"] == "model_response"
                 and e.get("purpose") == "original"]
    assert responses and all(e["usage"] for e in responses)


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_no_record_type_codex_wrote_is_unknown(codex, name):
    skipped = replayed(codex, name).skipped
    assert not [k for k in skipped if "unknown" in k], (session(codex, name).rollout, skipped)


def test_the_watch_recording_replays_each_thread_as_codex_sent_it(codex):
    """The watch's recording of both sessions: one conversation per thread, each with its
    compactions found on the request after the compaction call, and the same histories and
    usage as the rollouts."""
    whole = load_recording(codex.recording)
    assert len(whole.conversations) == 2
    in_order = sorted(whole.conversations, key=lambda c: c.first_line)  # local ran first
    for name, info in zip(("local", "remote"), in_order, strict=True):
        turns = [c for c in calls_of(codex, name) if kind(c) == "turn"]
        assert info.requests == len(calls_of(codex, name))  # its compaction calls too
        recording = load_recording(codex.recording, conversation=info.id)
        assert len(recording.compactions) == SESSIONS[name]
        assert [e.usage for e in recording.exchanges] == \
            [usage_of(codex.usage_of(c)) for c in turns]
        histories = [blocks(h.messages) for _, h in as_sent(recording)]
        assert histories == [blocks(sent(c)) for c in turns]
