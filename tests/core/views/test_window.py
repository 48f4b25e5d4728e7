"""The window of one request: its categories add up to the request's tokens exactly, the
free space to the window, a replay's unrecorded overhead is the ratio fit's intercept, and
an agent's auto-compact threshold is the one its boundary records state."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core import events as ev
from core.config import Thresholds
from core.sources.replay import load_recording
from core.sources.replay.limits import CLAUDE_WINDOW
from core.sources.replay.original import ratio_fit
from core.views.requests import RequestLog, fold
from core.views.window import OVERHEAD, Window, apportion, window_of
from tests.core.sources.replay.conftest import FIXTURES, WATCHED_CODEX
from tests.core.sources.replay.test_source import replay

CLAUDE_BOUNDARY = FIXTURES / "claude-code-2.1.197" / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"
RATIO = 3.6
OVERHEAD_TOKENS = 28_000  # the system prompt and tools a transcript does not record


def sums_hold(window: Window) -> None:
    assert sum(p.tokens for p in window.parts) == window.tokens
    assert window.tokens + window.free_tokens == window.window_tokens + window.over_tokens


@pytest.mark.parametrize("seed", range(20))
def test_apportion_adds_up_exactly(seed):
    rng = random.Random(seed)
    weights = [rng.randrange(0, 50_000) for _ in range(rng.randrange(1, 15))]
    total = rng.randrange(0, 300_000)
    shares = apportion(total, weights)
    assert sum(shares) == (total if sum(weights) else 0)
    assert all(abs(s - total * w / sum(weights)) < 1 for s, w in zip(shares, weights,
                                                                     strict=True))


def own_request(log: RequestLog, tokens: int | None, model: str = "claude-sonnet-4-5") -> None:
    log.see(ev.RunStart(provider="anthropic", workspace="/w", model=model))
    breakdown = {"system": 3_001, "tools": 1_307, "memory": 77, "text": 4_000,
                 "tool_results": 20_013, "structure": 999}
    log.see(ev.ModelRequest(purpose="main", chars=25_012, est_tokens=7_100, messages=9,
                            breakdown=breakdown))
    usage = None if tokens is None else {"input_tokens": tokens - 5_000,
                                         "cache_read_input_tokens": 5_000}
    log.see(ev.ModelResponse(purpose="main", stop_reason="end_turn", usage=usage))


def test_ctxlabs_own_request_adds_up_to_the_apis_count_with_its_thresholds():
    log = RequestLog()
    own_request(log, 8_123)
    window = window_of(log, "ctxlab", limits=Thresholds(context_limit=50_000))
    assert window is not None
    sums_hold(window)
    assert window.tokens == log.side("ctxlab")[-1].tokens == 8_123 and window.counted
    assert (window.window_tokens, window.window_source) == (CLAUDE_WINDOW, "model")
    assert {p.category: p.chars for p in window.parts} == log.side("ctxlab")[-1].breakdown
    per_call = sum(p.tokens for p in window.parts if p.per_call)
    marks = {m.kind: m for m in window.marks}
    assert marks["trigger"].chars == 50_000 and marks["target"].chars == 40_000
    assert marks["trigger"].tokens == per_call + round(50_000 / 4.0)  # the engine's ratio
    assert window.buffer_tokens == CLAUDE_WINDOW - marks["trigger"].tokens


def test_an_unknown_models_window_is_drawn_to_a_scale_and_claims_no_buffer():
    log = RequestLog()
    own_request(log, None, model="scripted")
    window = window_of(log, "ctxlab", limits=Thresholds(context_limit=6_000))
    assert window is not None
    sums_hold(window)
    assert window.tokens == 7_100 and not window.counted  # the event's estimate
    assert window.window_source == "scale" and window.buffer_source == "unknown"
    trigger = next(m for m in window.marks if m.kind == "trigger")
    assert window.window_tokens == max(window.tokens, round(trigger.tokens * 1.25))


def overhead_recording(tmp_path: Path) -> Path:
    """A request log whose every request carried OVERHEAD_TOKENS the history does not show."""
    messages: list[dict] = []
    rows = []
    for n in range(8):
        messages = [*messages, {"role": "user", "content": f"step {n}: " + "word " * 3_000}]
        chars = sum(len(json.dumps(m)) + 2 for m in messages)
        tokens = int(chars / RATIO) + OVERHEAD_TOKENS
        reply = [{"type": "text", "text": "ok " * 200}]
        rows.append({"request": {"model": "claude-sonnet-4-5", "max_tokens": 8000,
                                 "messages": messages},
                     "response": {"content": reply, "usage": {"input_tokens": tokens}}})
        messages = [*messages, {"role": "assistant", "content": reply}]
    path = tmp_path / "overhead.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_fits_intercept_is_the_unrecorded_overhead_drawn_as_its_own_category(tmp_path):
    path = overhead_recording(tmp_path)
    fit = ratio_fit(load_recording(path))
    assert fit.ratio == pytest.approx(RATIO, rel=0.02)
    assert fit.overhead_tokens == pytest.approx(OVERHEAD_TOKENS, rel=0.02)
    ok, recorder, _ = replay(path, tmp_path)
    assert ok
    [start] = recorder.of(ev.ReplayStart)
    assert start.overhead_tokens == fit.overhead_tokens
    log = fold(recorder.events)
    for step in recorder.of(ev.ReplayStep):
        theirs = window_of(log, "original", step.index)
        assert theirs is not None
        sums_hold(theirs)
        assert theirs.tokens == step.original_tokens  # the recorded count, split
        assert theirs.part(OVERHEAD) is not None
        assert (theirs.part(OVERHEAD).tokens, theirs.part(OVERHEAD).chars) == \
            (fit.overhead_tokens, None)
        ours = window_of(log, "ctxlab", step.index)
        assert ours is not None
        sums_hold(ours)
        point = log.find("ctxlab", step.index)
        assert point is not None
        assert ours.tokens == point.est_tokens + fit.overhead_tokens


def test_claude_codes_threshold_is_its_boundary_records_and_the_buffer_is_derived(tmp_path):
    ok, recorder, _ = replay(CLAUDE_BOUNDARY, tmp_path)
    assert ok
    auto = [s for s in recorder.of(ev.Stage) if s.by == "claude-code" and s.trigger == "auto"]
    assert auto and auto[0].pre_tokens == 190_048
    log = fold(recorder.events)
    window = window_of(log, "original")
    assert window is not None
    sums_hold(window)
    [mark] = window.marks
    assert (mark.kind, mark.tokens, mark.source) == ("auto_compact", 190_048, "recorded")
    assert window.window_tokens == CLAUDE_WINDOW
    assert (window.buffer_tokens, window.buffer_source) == (CLAUDE_WINDOW - 190_048, "derived")


def test_with_no_boundary_record_the_agents_buffer_is_unknown():
    log = RequestLog()
    log.see(ev.WatchStart(listen="http://127.0.0.1:1", upstream="u", recording="r"))
    log.see(ev.WatchRequest(id=4, method="POST", path="/v1/messages", time="t",
                            model="claude-opus-4-1", conversation="c", messages=2,
                            chars=9_000, est_tokens=2_300, breakdown={"text": 8_000,
                                                                       "structure": 1_000}))
    log.see(ev.WatchResponse(id=4, status=200, usage={"input_tokens": 2_500}))
    window = window_of(log, "watched", 4)
    assert window is not None
    sums_hold(window)
    assert window.tokens == 2_500 and window.window_tokens == CLAUDE_WINDOW
    assert window.marks == () and window.buffer_source == "unknown"


def test_a_codex_recording_states_its_own_window(tmp_path):
    ok, recorder, _ = replay(WATCHED_CODEX, tmp_path)
    assert ok
    log = fold(recorder.events)
    for side in log.sides():
        window = window_of(log, side)
        assert window is not None
        sums_hold(window)


def test_with_no_fit_the_count_beyond_the_recorded_chars_is_the_unrecorded_overhead():
    """A session too short to fit (the ratio an estimate, no intercept): the count's part
    that the recorded chars at the ratio do not explain is the system prompt and tools the
    transcript lacks — spreading it over the messages would make 2,892 chars of tool results
    weigh 14,827 tokens."""
    log = RequestLog()
    log.see(ev.RunStart(provider="replay", workspace="/w", model="claude-sonnet-4-5"))
    log.see(ev.ReplayStart(format="claude-code", path="s.jsonl", agent="claude-code",
                           requests=1, compactions=0, lines_read=3, lines_total=3, skipped={},
                           chars_per_token=4.0, ratio_source="estimate", unit="tokens",
                           context_limit=800_000, context_limit_tokens=200_000))
    log.see(ev.ModelRequest(purpose="original", chars=4_000, est_tokens=1_000, messages=3))
    log.see(ev.ModelResponse(purpose="original", stop_reason="end_turn",
                             usage={"input_tokens": 24_000}))
    log.see(ev.ReplayStep(index=1, total=1, original_chars=4_000, original_messages=3,
                          original_tokens=24_000, categories={}, ctxlab_chars=4_000,
                          ctxlab_messages=3,
                          breakdown={"text": 1_000, "tool_results": 2_800, "structure": 200}))
    window = window_of(log, "original")
    assert window is not None
    sums_hold(window)
    parts = {p.category: p.tokens for p in window.parts}
    assert parts == {OVERHEAD: 23_000, "text": 250, "tool_results": 700, "structure": 50}
