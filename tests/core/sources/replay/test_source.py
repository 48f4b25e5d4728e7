"""The replay source: the original beside ctxlab's pipeline, as a live run's events."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.sessions import RATIO, write_session
from core.compact.breakdown import CATEGORIES, MESSAGE_CATEGORIES
from core.config import Thresholds
from core.events import (
    Emitter,
    ModelRequest,
    Recorder,
    ReplayStart,
    ReplayStep,
    Stage,
    event_from_json,
)
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE, CODEX, FIXTURES, MESSAGES, REQUESTS


def replay(path, tmp_path, **options):
    source = ReplaySource(load_recording(path), ReplayOptions(workdir=tmp_path / "w",
                                                              **options))
    recorder = Recorder()
    ok = asyncio.run(source.run(Emitter(sinks=[recorder])))
    return ok, recorder, source


def test_the_stream_is_a_run_with_both_sides_of_every_request(tmp_path):
    ok, rec, _ = replay(CLAUDE, tmp_path)
    assert ok
    types = [e.type for e in rec.events]
    assert types[:2] == ["run_start", "replay_start"] and types[-1] == "run_end"
    steps = rec.of(ReplayStep)
    assert [s.index for s in steps] == [1, 2, 3, 4, 5, 6]
    purposes = [e.purpose for e in rec.events if e.type == "model_request"]
    assert purposes == ["original", "main"] * 6
    usage = [e.usage for e in rec.events if e.type == "model_response"]
    assert usage[0]["cache_read_input_tokens"] == 14350  # the recorded usage, as is
    for event in rec.events:  # every event survives the JSONL round trip
        data = json.loads(json.dumps(event.to_json()))
        assert event_from_json(data).to_json() == data


def test_the_original_agents_compaction_is_a_stage_of_its_own(tmp_path):
    _, rec, _ = replay(CLAUDE, tmp_path)
    [stage] = [s for s in rec.of(Stage) if s.by != "ctxlab"]
    assert (stage.stage, stage.by, stage.trigger, stage.pre_tokens) == \
        ("auto_compact", "claude-code", "auto", 170251)
    assert stage.after_messages == 1 and stage.before_messages == 8
    summary = (tmp_path / "w" / stage.files[0]).read_text(encoding="utf-8")
    assert summary.startswith("This session is being continued")
    after = rec.of(ReplayStep)[4]  # the original restarted from its summary; ctxlab did not
    assert after.original_messages == 2 and after.ctxlab_messages == 9


def test_ctxlab_compacts_with_its_own_archive_exactly_as_in_a_live_run(tmp_path):
    _, rec, source = replay(CLAUDE, tmp_path, thresholds=Thresholds(context_limit=2_000))
    ours = [s for s in rec.of(Stage) if s.by == "ctxlab"]
    assert {"micro_compact", "compact_history"} & {s.stage for s in ours}
    assert all(s.trigger is None for s in ours)
    for entry in source.compactor.ledger:  # every byte that left is on disk
        assert (tmp_path / "w" / entry["where"]).is_file()
    assert rec.of(ReplayStep)[-1].ctxlab_chars < rec.of(ReplayStep)[-1].original_chars + 5_000


def test_categories_split_thinking_images_and_tool_results(tmp_path):
    _, rec, _ = replay(CLAUDE, tmp_path)
    cats = rec.of(ReplayStep)[3].categories
    assert cats["thinking"] > 0 and cats["image"] > 0 and cats["tool_result"] > 2_000


def test_both_sides_are_broken_down_in_one_vocabulary_adding_up_to_their_chars(tmp_path):
    _, rec, _ = replay(CLAUDE, tmp_path, thresholds=Thresholds(context_limit=2_200))
    ours = [e for e in rec.of(ModelRequest) if e.purpose == "main"]
    steps = rec.of(ReplayStep)
    assert len(ours) == len(steps) == 6
    for request, step in zip(ours, steps, strict=True):
        assert sum(request.breakdown[k] for k in MESSAGE_CATEGORIES) == request.chars
        assert sum(step.breakdown[k] for k in MESSAGE_CATEGORIES) == step.original_chars
        assert set(request.breakdown) <= set(CATEGORIES) >= set(step.breakdown)
    # ctxlab's side is its own history (the image the user sent is there), and its own
    # summary shows on its side only
    assert ours[3].breakdown["images"] == steps[3].breakdown["images"] > 0
    assert ours[3].breakdown["summaries"] > 0 == steps[3].breakdown["summaries"]


def test_a_token_limit_is_converted_with_the_sessions_measured_ratio(tmp_path):
    session = write_session(tmp_path, 600_000)
    _, rec, source = replay(session, tmp_path, context_limit_tokens=20_000)
    [start] = rec.of(ReplayStart)
    assert start.ratio_source == "usage"
    assert start.chars_per_token == pytest.approx(RATIO, rel=0.05)
    assert (start.unit, start.context_limit_tokens) == ("tokens", 20_000)
    assert start.context_limit == int(20_000 * source.ratio)
    assert source.compactor.thresholds.context_limit == start.context_limit


def test_without_usage_the_estimate_is_used_and_the_unit_is_chars(tmp_path):
    _, rec, _ = replay(MESSAGES, tmp_path)
    [start] = rec.of(ReplayStart)
    assert (start.ratio_source, start.chars_per_token, start.unit) == ("estimate", 4.0, "chars")
    assert start.context_limit == 50_000


@pytest.mark.parametrize("path", [CODEX, REQUESTS, MESSAGES])
def test_every_format_replays_to_the_end(tmp_path, path):
    ok, rec, _ = replay(path, tmp_path)
    assert ok and rec.events[-1].ok


def test_nothing_is_written_next_to_the_session_file(tmp_path):
    before = sorted(p for p in FIXTURES.rglob("*"))
    replay(CLAUDE, tmp_path)
    assert sorted(p for p in FIXTURES.rglob("*")) == before


def test_step_plays_one_request_at_a_time(tmp_path):
    async def scenario():
        source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w"))
        rec = Recorder()
        source.pause()
        task = asyncio.create_task(source.run(Emitter(sinks=[rec])))
        await asyncio.sleep(0.05)
        assert rec.of(ReplayStep) == []
        source.step()
        for _ in range(100):
            await asyncio.sleep(0.01)
        assert [s.index for s in rec.of(ReplayStep)] == [1]
        source.until_next_stage()
        for _ in range(100):
            await asyncio.sleep(0.01)
        assert [s.by for s in rec.of(Stage)] == ["claude-code"]
        assert len(rec.of(ReplayStep)) == 4  # paused right after the compaction step
        source.resume()
        assert await asyncio.wait_for(task, 5)
        task.cancel()

    asyncio.run(scenario())


def test_cancelling_ends_with_an_error_and_run_end(tmp_path):
    async def scenario():
        source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w"))
        rec = Recorder()
        source.pause()
        task = asyncio.create_task(source.run(Emitter(sinks=[rec])))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return rec

    rec = asyncio.run(scenario())
    assert [e.type for e in rec.events[-2:]] == ["error", "run_end"]
    assert rec.events[-1].ok is False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(messages=st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant"]),
    "content": st.one_of(st.text(max_size=30), st.integers(), st.lists(st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
        st.fixed_dictionaries({"type": st.just("tool_use"), "id": st.sampled_from("ab"),
                               "name": st.just("x"), "input": st.just({})}),
        st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id":
                               st.sampled_from("ab"), "content": st.one_of(
                                   st.text(max_size=200), st.lists(st.just(
                                       {"type": "text", "text": "y" * 50}), max_size=3))}),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)), max_size=4))}),
    min_size=1, max_size=14))
def test_any_history_replays_without_a_traceback(tmp_path, messages):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(messages))
    try:
        recording = load_recording(path)
    except ValueError:
        return
    source = ReplaySource(recording, ReplayOptions(workdir=tmp_path / "w",
                                                   thresholds=Thresholds(context_limit=300,
                                                                         max_messages=6)))
    rec = Recorder()
    asyncio.run(source.run(Emitter(sinks=[rec])))
    assert rec.events[-1].type == "run_end"
    assert not [e for e in rec.events if e.type == "error"]


def test_speed_paces_the_requests(tmp_path):
    source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w",
                                                                speed=4.0))
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    source.controls.sleep = sleep
    assert asyncio.run(source.run(lambda event: event))
    assert pauses == [0.25] * 7  # before each of the 6 requests and the compaction


def test_a_replay_nobody_can_seek_keeps_no_step_to_show_again(tmp_path):
    """Headless, a replay does not offer seeking, so it holds none of its steps' events."""
    from core.sources import Capability, Unsupported

    source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w",
                                                                seekable=False))
    assert not source.offers(Capability.SEEK)
    with pytest.raises(Unsupported):
        source.seek(0)
    assert asyncio.run(source.run(Emitter(sinks=[Recorder()])))
    assert source._played == []  # nothing kept for a seek that cannot come


def test_without_a_ui_the_stages_run_on_the_loop_and_report_the_same(tmp_path, monkeypatch):
    """Headless, nothing draws while the stages run, so they run on the event loop's thread
    (no hop to a worker); the events are those of the replay that hops."""
    import threading

    import core.compact.pipeline as pipeline

    session = tmp_path / "s"
    session.mkdir()
    path = write_session(session, 400_000)
    limits = Thresholds(context_limit=40_000, max_messages=30)
    _, hopped, _ = replay(path, tmp_path / "a", thresholds=limits)
    threads: set[str] = set()
    real = pipeline.Compactor.prepare_local

    def spy(self, messages):
        threads.add(threading.current_thread().name)
        return real(self, messages)

    monkeypatch.setattr(pipeline.Compactor, "prepare_local", spy)
    ok, inline, _ = replay(path, tmp_path / "b", thresholds=limits, stages_in_thread=False)
    assert ok and threads == {threading.main_thread().name}

    def plain(recorder):  # a transcript's name is random
        return [re.sub(r"transcript_[0-9a-f]{32}", "transcript", json.dumps(
            {k: v for k, v in e.to_json().items() if k not in ("t", "workspace")}))
                for e in recorder.events]

    assert plain(inline) == plain(hopped)
    assert any(e.type == "stage" and e.stage == "snip_compact" for e in inline.events)
