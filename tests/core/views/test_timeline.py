"""The timeline's points are the events' own figures, for every source; its marks sit on
the requests the compactions were made for; its cache reads are the answers' own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core import events as ev
from core.config import Thresholds
from core.views.requests import RequestLog, fold
from core.views.timeline import build
from core.views.window import trigger, window_of
from tests.core.sources.replay.conftest import FIXTURES
from tests.core.sources.replay.test_source import replay
from tests.core.views.test_requests import headless

CLAUDE_COMPACTING = FIXTURES / "claude-code-2.1.197" / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"
WATCHED = FIXTURES / "watch-2.1.197" / "compactions.jsonl"


def original_figures(events: list[ev.Event]) -> list[int]:
    """What each replay step says the original filled: its recorded tokens, else the
    recorded answer's count, else the estimate of the request it sent."""
    figures, request, answer = [], None, None
    for event in events:
        if isinstance(event, ev.ModelRequest) and event.purpose == "original":
            request, answer = event, None
        elif isinstance(event, ev.ModelResponse) and event.purpose == "original":
            answer = event
        elif isinstance(event, ev.ReplayStep):
            assert request is not None
            said = event.original_tokens if event.original_tokens is not None else (
                answer.context_tokens if answer is not None else None)
            figures.append(said if said is not None else request.est_tokens)
    return figures


def sent_alike(log: RequestLog, index: int) -> int:
    window = window_of(log, "original", index)
    assert window is not None
    return sum(p.tokens for p in window.parts if p.per_call)


def test_the_demos_points_are_its_main_calls_estimates_and_its_stages_are_marked():
    events = headless("run", "--headless", "--scenario", "long-migration")
    log = fold(events)
    timeline = build(log, Thresholds())
    ours = timeline.side("ctxlab")
    mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
    assert ours is not None and [s.side for s in timeline.series] == ["ctxlab"]
    assert list(ours.y) == [m.est_tokens for m in mains]  # scripted: no API count
    assert not any(ours.counted) and not ours.has_cache
    # every stage marked on the main call right after it
    expected: list[tuple[int, str, int, int]] = []
    calls = 0
    waiting: list[ev.Stage] = []
    for event in events:
        if isinstance(event, ev.Stage):
            waiting.append(event)
        elif isinstance(event, ev.ModelRequest) and event.purpose == "main":
            calls += 1
            expected += [(calls, s.stage, s.before_chars, s.after_chars) for s in waiting]
            waiting = []
    assert expected
    assert [(m.index, m.stage, m.before_chars, m.after_chars) for m in ours.marks] == expected
    # the trigger in tokens, where the window view marks it: what is sent with every call,
    # then the char limit over 4
    window = window_of(log, "ctxlab", limits=Thresholds())
    assert window is not None
    per_call = sum(p.tokens for p in window.parts if p.per_call)
    assert ours.threshold == per_call + round(Thresholds().context_limit / 4)


@pytest.mark.parametrize("path", [CLAUDE_COMPACTING, WATCHED], ids=["claude-code", "watch"])
def test_a_replays_points_equal_its_steps_figures(tmp_path: Path, path: Path):
    ok, recorder, source = replay(path, tmp_path)
    assert ok
    events = recorder.events
    log = fold(events)
    timeline = build(log, source.thresholds)
    original, ours = timeline.side("original"), timeline.side("ctxlab")
    assert original is not None and ours is not None
    steps = recorder.of(ev.ReplayStep)
    assert list(original.x) == [s.index for s in steps] == list(ours.x)
    assert list(original.y) == original_figures(events)
    mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
    # ctxlab's estimate of its messages, plus what the original sent with every call at
    # the same step (the system prompt and tools the file may not hold): like with like
    assert list(ours.y) == [m.est_tokens + sent_alike(log, i)
                            for i, m in zip(ours.x, mains, strict=True)]
    assert abs(ours.y[0] - original.y[0]) <= 2  # the same list sent: the same size
    answers = [e for e in events if isinstance(e, ev.ModelResponse) and e.purpose == "original"]
    assert list(original.cache_read) == [
        None if a.tokens is None else a.tokens.cache_read for a in answers]
    # each side's line where the window view marks its compaction
    for series in (original, ours):
        mark = trigger(log, series.side, source.thresholds)
        assert series.threshold == (None if mark is None else mark.tokens)
    assert ours.threshold is not None


def test_the_recorded_agents_compactions_are_marked_where_they_happened(tmp_path: Path):
    _, recorder, _ = replay(CLAUDE_COMPACTING, tmp_path)
    events = recorder.events
    timeline = build(fold(events))
    original = timeline.side("original")
    # the agent's own trigger: the lowest context its automatic compactions reported
    assert original is not None and original.threshold == 190_048
    recorded = [e for e in events if isinstance(e, ev.Stage) and e.by == "claude-code"]
    # each one belongs to the replay step that follows it
    after: list[int] = []
    for stage in recorded:
        at = events.index(stage)
        after.append(next(e.index for e in events[at:] if isinstance(e, ev.ReplayStep)))
    marks = original.marks
    assert [(m.index, m.stage, m.before_tokens, m.after_tokens) for m in marks] == [
        (i, s.stage, s.pre_tokens, s.post_tokens) for i, s in zip(after, recorded, strict=True)]
    assert [(m.index, m.stage) for m in marks] == [(4, "auto_compact"), (7, "manual_compact")]
    assert marks[0].in_tokens and (marks[0].before_tokens, marks[0].after_tokens) == (190_048, 764)
    # the tokens drop on the request after the compaction, as recorded
    assert original.y[original.at(4)] < original.y[original.at(3)]


def watch_events() -> list[ev.Event]:
    shrink = ev.Stage(stage="client_summary", before_chars=9000, after_chars=2000,
                      before_messages=30, after_messages=3, by="client")
    said: list[Any] = [
        ev.WatchStart(listen="http://127.0.0.1:1", upstream="u", recording="r"),
        ev.WatchRequest(id=1, method="POST", path="/v1/messages", time="t1",
                        conversation="c1", messages=3, chars=9000, est_tokens=2300),
        ev.WatchResponse(id=1, status=200, usage={"input_tokens": 40,
                                                  "cache_read_input_tokens": 2400}),
        ev.WatchRequest(id=2, method="POST", path="/v1/messages/count_tokens", time="t2"),
        ev.WatchRequest(id=3, method="POST", path="/v1/messages", time="t3",
                        conversation="c1", messages=3, chars=2000, est_tokens=520),
        shrink,
        ev.WatchRequest(id=4, method="POST", path="/v1/messages", time="t4",
                        conversation="c1", messages=5, chars=2600, est_tokens=700),
        ev.WatchResponse(id=4, status=200, usage={"input_tokens": 710}),
    ]
    return said


def test_a_watched_clients_requests_are_its_answers_counts_or_its_estimates():
    events = watch_events()
    watched = build(fold(events)).side("watched")
    assert watched is not None
    assert list(watched.x) == [1, 3, 4]  # the count_tokens call is no model request
    assert list(watched.y) == [2440, 520, 710]
    assert list(watched.counted) == [True, False, True]
    assert list(watched.cache_read) == [2400, None, 0] and watched.has_cache
    assert [(m.index, m.stage, m.by) for m in watched.marks] == [(3, "client_summary", "client")]
    assert watched.threshold is None


def test_an_empty_log_has_no_series_and_no_scale():
    timeline = build(fold([]), Thresholds())
    assert timeline.series == () and timeline.requests == () and timeline.top == 0


def test_a_watch_timeline_of_one_conversation_leaves_the_others_out():
    events = watch_events()
    events.insert(4, ev.WatchRequest(id=9, method="POST", path="/v1/messages", time="t9",
                                     conversation="side", messages=1, chars=40,
                                     est_tokens=12))
    everything = build(fold(events)).side("watched")
    main = build(fold(events), conversation="c1").side("watched")
    assert everything is not None and main is not None
    assert 9 in everything.x and list(main.x) == [1, 3, 4]
