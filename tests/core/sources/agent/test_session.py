"""The session object every front end drives: several prompts are one session, stages
record their own before/after, and the event-source seam holds."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from core import sources as source
from core.events import IndexRebuilt, Recorder, RunEnd, Stage
from core.measure import json_chars
from core.scenarios import find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from tests.support.messages_server import MessagesServer


def test_prompts_sent_one_by_one_are_one_saved_session(server_env: MessagesServer,
                                                        tmp_path: Path) -> None:
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path, provider="anthropic",
                                      session="work"), recorder)
    saved = tmp_path / ".ctxlab/sessions/work/session.json"

    async def play() -> list[int]:
        turns = []
        for n in (1, 2, 3):
            server_env.reply_text(f"answer {n}")
            server_env.reply_text("[]")  # the memory extractor finds nothing durable
            assert await session.send(f"prompt {n}")
            turns.append(json.loads(saved.read_text(encoding="utf-8"))["turns"])
            assert recorder.of(RunEnd) == []
        await session.end()
        await session.end()  # ending twice says run_end once
        return turns

    assert asyncio.run(play()) == [1, 2, 3]
    kinds = [e.type for e in recorder.events]
    assert kinds[0] == "run_start" and kinds.count("run_start") == 1
    assert kinds[-1] == "run_end" and kinds.count("run_end") == 1
    assert recorder.events[-1].ok and recorder.events[-1].turns == 3
    with pytest.raises(RuntimeError):
        asyncio.run(session.send("too late"))


def test_a_session_left_before_its_first_prompt_says_nothing(tmp_path: Path) -> None:
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path), recorder)
    asyncio.run(session.end())
    assert recorder.events == []


@pytest.mark.parametrize("record", [True, False])
def test_stages_record_what_they_received_and_produced(tmp_path: Path, record: bool) -> None:
    recorder = Recorder()
    options = RunOptions(workspace=tmp_path, scenario=find_scenario("refactor-auth"),
                         record_stages=record)
    assert asyncio.run(AgentSession(options, recorder).run())
    stages = recorder.of(Stage)
    assert stages
    for e in stages:
        assert "snapshot" not in e.to_json()  # never on the wire
        if not record:
            assert e.snapshot is None
            continue
        assert e.snapshot is not None
        assert (json_chars(e.snapshot.before), len(e.snapshot.before)) == \
            (e.before_chars, e.before_messages), e.stage
        assert (json_chars(e.snapshot.after), len(e.snapshot.after)) == \
            (e.after_chars, e.after_messages), e.stage


def test_the_agent_session_is_an_event_source(tmp_path: Path) -> None:
    session = AgentSession(RunOptions(workspace=tmp_path))
    assert isinstance(session, source.EventSource)
    assert session.kind == "ctxlab"
    assert source.can(session, source.SEND) and not source.can(session, source.NEXT_STAGE)
    assert not source.can(object(), source.PAUSE)


HAND_WRITTEN = "---\nname: Deploy window\ndescription: Tuesdays only\ntype: project\n---\n\nNo.\n"


def test_hand_edits_arrive_as_events_and_own_writes_never_look_like_them(
        tmp_path: Path) -> None:
    """One store per workspace: writes through it are ctxlab's own (trigger ``write``);
    the watcher reports only what changed behind its back (trigger ``watch``)."""
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path), recorder)
    store = session.memory_store
    assert store is not None and session.memory_store is store  # one store
    session.watch_memory()
    try:
        store.write("Own note", "written by ctxlab", "project", "Body.")
        time.sleep(0.6)  # longer than the watcher's flush delay
        assert [e.trigger for e in recorder.of(IndexRebuilt)] == ["write"]
        (tmp_path / ".memory" / "deploy-window.md").write_text(HAND_WRITTEN, "utf-8")
        for _ in range(100):
            if any(e.trigger == "watch" for e in recorder.of(IndexRebuilt)):
                break
            time.sleep(0.05)
    finally:
        session.stop_watching_memory()
    watched = [e for e in recorder.of(IndexRebuilt) if e.trigger == "watch"]
    assert len(watched) == 1 and "deploy-window.md" in watched[0].changed


def test_a_replay_is_an_event_source_too(tmp_path: Path) -> None:
    from core.sources.replay import load_recording
    from core.sources.replay.source import ReplayOptions, ReplaySource

    fixture = Path(__file__).parents[3] / "fixtures/replay/messages/history.json"
    replay = ReplaySource(load_recording(fixture), ReplayOptions(workdir=tmp_path))
    assert isinstance(replay, source.EventSource) and replay.kind == "replay"
    assert source.can(replay, source.STEP) and not source.can(replay, source.SEND)
