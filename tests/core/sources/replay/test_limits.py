"""ctxlab's limits in a replay: scaled to the model's window unless the course's are asked
for, the message-count rule with them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.config import Thresholds
from core.events import Emitter, ReplayStart
from core.sources.replay import load_recording
from core.sources.replay.limits import CLAUDE_WINDOW, LimitMode, resolve
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE, FIXTURES

COMPACTIONS = FIXTURES / "watch-2.1.197" / "compactions.jsonl"


def start_of(recording, tmp_path: Path, **options) -> ReplayStart:
    events: list = []
    source = ReplaySource(recording, ReplayOptions(workdir=tmp_path / "w", seekable=False,
                                                   **options))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    assert source.compactor is not None
    [start] = [e for e in events if isinstance(e, ReplayStart)]
    assert source.compactor.thresholds.context_limit == start.context_limit
    assert source.compactor.thresholds.max_messages == start.max_messages
    return start


def test_by_default_a_real_session_runs_at_limits_scaled_to_its_models_window(tmp_path):
    rec = load_recording(COMPACTIONS)
    start = start_of(rec, tmp_path, limits=LimitMode.WINDOW)
    chars = int(CLAUDE_WINDOW * start.chars_per_token)
    assert (start.limits, start.context_limit_tokens, start.context_limit) == (
        "window", CLAUDE_WINDOW, chars)
    assert start.max_messages == round(50 * chars / 50_000)
    assert "scaled to the model's 200,000-token window" in start.limits_line()


def test_the_course_limits_are_the_courses_50000_chars_and_50_messages(tmp_path):
    start = start_of(load_recording(COMPACTIONS), tmp_path, limits=LimitMode.COURSE)
    assert (start.limits, start.context_limit, start.max_messages) == ("course", 50_000, 50)
    assert start.limits_line() == "50,000 chars, 50 messages: the course's limits " \
        "(--course-limits)"


def test_an_older_log_without_limits_says_the_char_limit_alone():
    old = ReplayStart(format="requests", path="p", agent="agent", requests=1, compactions=0,
                      lines_read=1, lines_total=1, skipped={}, chars_per_token=4.0,
                      ratio_source="estimate", unit="chars", context_limit=50_000)
    assert old.limits_line() == "50,000 chars"


def test_a_token_limit_scales_the_message_count_rule_too(tmp_path):
    start = start_of(load_recording(CLAUDE), tmp_path, limits=LimitMode.WINDOW,
                     context_limit_tokens=150_000)
    assert (start.limits, start.context_limit_tokens) == ("tokens", 150_000)
    assert start.context_limit == int(150_000 * start.chars_per_token)
    assert start.max_messages == round(50 * start.context_limit / 50_000) > 50


def test_a_limit_the_user_set_is_never_scaled():
    limits = resolve(Thresholds(max_messages=30), LimitMode.WINDOW, 4.0,
                     model="claude-opus-4-5", explicit=frozenset({"max_messages"}))
    assert (limits.thresholds.context_limit, limits.thresholds.max_messages) == (800_000, 30)


def test_an_unknown_model_is_scaled_to_an_assumed_window_and_given_limits_stay():
    assert resolve(Thresholds(), LimitMode.WINDOW, 4.0, model="gpt-5").window_tokens == \
        CLAUDE_WINDOW
    given = resolve(Thresholds(context_limit=6_000), LimitMode.GIVEN, 4.0, model="claude-x")
    assert (given.mode, given.thresholds.context_limit) == ("given", 6_000)


def test_a_char_limit_the_user_gave_sets_the_message_rule_and_scales_nothing():
    limits = resolve(Thresholds(context_limit=60_000), LimitMode.WINDOW, 3.7,
                     model="claude-opus-4-8", explicit=frozenset({"context_limit"}))
    assert (limits.mode, limits.window_tokens) == ("given", None)
    assert (limits.thresholds.context_limit, limits.thresholds.max_messages) == (60_000, 60)


def test_a_session_that_used_more_than_the_standard_window_ran_with_the_long_one():
    """Claude Code's default model runs with a 1M-token window; its recording names the
    model only, but a request of 300,000 tokens could not have fit in 200,000."""
    limits = resolve(Thresholds(), LimitMode.WINDOW, 4.0, model="claude-opus-4-8",
                     seen=300_000)
    assert limits.window_tokens == 1_000_000
    assert limits.thresholds.context_limit == 4_000_000
    assert resolve(Thresholds(), LimitMode.WINDOW, 4.0, model="claude-opus-4-8",
                   seen=190_000).window_tokens == 200_000


def test_a_codex_rollout_runs_at_the_window_it_states(tmp_path):
    rollout = FIXTURES / "codex-0.171.0" / "tools.jsonl"
    start = start_of(load_recording(rollout), tmp_path, limits=LimitMode.WINDOW)
    assert (start.limits, start.context_limit_tokens) == ("window", 258_400)
    assert "258,400-token window" in start.limits_line()
    assert resolve(Thresholds(), LimitMode.WINDOW, 3.0, model="gpt-5-codex",
                   recorded=258_400).thresholds.context_limit == 775_200
