"""The session object every front end drives: several prompts are one session, stages
record their own before/after, and the event-source seam holds."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.events import Error, IndexRebuilt, Recorder, RunEnd, Stage
from core.measure import json_chars
from core.scenarios import find_scenario
from core.sources import Capability, Source, Unsupported
from core.sources.agent.session import AgentSession, RunOptions
from tests.support.messages_server import MessagesServer


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def test_prompts_sent_one_by_one_are_one_saved_session(server_env: MessagesServer,
                                                        tmp_path: Path) -> None:
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path, provider="anthropic",
                                      session="work", interactive=True), recorder)
    saved = tmp_path / ".ctxlab/sessions/work/session.json"

    async def play() -> list[int]:
        task = asyncio.create_task(session.run())
        turns = []
        for n in (1, 2, 3):
            server_env.reply_text(f"answer {n}")
            server_env.reply_text("[]")  # the memory extractor finds nothing durable
            await until(lambda: session.awaiting_prompt)
            session.send(f"prompt {n}")
            await until(lambda n=n: session.turns == n and session.awaiting_prompt)
            turns.append(json.loads(saved.read_text(encoding="utf-8"))["turns"])
            assert recorder.of(RunEnd) == []
        session.finish()
        session.finish()  # finishing twice says run_end once
        assert await asyncio.wait_for(task, 10)
        return turns

    assert asyncio.run(play()) == [1, 2, 3]
    kinds = [e.type for e in recorder.events]
    assert kinds[0] == "run_start" and kinds.count("run_start") == 1
    assert kinds[-1] == "run_end" and kinds.count("run_end") == 1
    assert recorder.events[-1].ok and recorder.events[-1].turns == 3
    with pytest.raises(RuntimeError):
        session.send("too late")


def test_a_failed_live_turn_is_said_and_the_session_takes_the_next_prompt(
        server_env: MessagesServer, tmp_path: Path) -> None:
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path, provider="anthropic",
                                      interactive=True), recorder)

    async def play() -> bool:
        task = asyncio.create_task(session.run())
        server_env.error(400, "invalid_request_error", "no such model")
        await until(lambda: session.awaiting_prompt)
        session.send("first")
        await until(lambda: bool(recorder.of(Error)) and session.awaiting_prompt)
        server_env.reply_text("second answer")
        server_env.reply_text("[]")
        session.send("second")
        await until(lambda: session.turns == 1 and session.awaiting_prompt)
        session.finish()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(play()) is False  # a turn failed: the run did not do all it was asked
    assert [e.kind for e in recorder.of(Error)] == ["api"]  # the API refused that one turn
    assert recorder.events[-1] == RunEnd(ok=False, turns=1)


def test_a_live_session_left_before_its_first_prompt_ends_normally(tmp_path: Path) -> None:
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path, interactive=True), recorder)

    async def play() -> bool:
        task = asyncio.create_task(session.run())
        await until(lambda: session.awaiting_prompt)
        assert session.idle
        session.finish()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(play())
    assert [e.type for e in recorder.events] == ["run_start", "run_end"]
    assert recorder.events[-1] == RunEnd(ok=True, turns=0)


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
    played = AgentSession(RunOptions(workspace=tmp_path))
    live = AgentSession(RunOptions(workspace=tmp_path, interactive=True))
    assert isinstance(played, Source) and isinstance(live, Source)
    assert played.offers(Capability.NEXT_STAGE) and not played.offers(Capability.SEND)
    assert live.offers(Capability.SEND) and live.offers(Capability.FINISH)
    assert not played.offers(Capability.SEEK)
    with pytest.raises(Unsupported):
        played.send("a prompt to a scenario")


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
    assert isinstance(replay, Source)
    assert replay.offers(Capability.STEP) and replay.offers(Capability.SEEK)
    assert not replay.offers(Capability.SEND)
