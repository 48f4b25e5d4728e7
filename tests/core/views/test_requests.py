"""The per-request fold: its points are the events' own figures, for every source."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import pytest

from core import events as ev
from core.events import event_from_json
from core.views.requests import LaterLog, RequestLog, RequestPoint, changed, fold
from tests.core.sources.replay.conftest import CLAUDE
from tests.core.sources.replay.test_source import replay


def headless(*args: str) -> list[ev.Event]:
    out = subprocess.run([sys.executable, "-m", "tui", *args, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return [event_from_json(json.loads(line)) for line in out.splitlines() if line.strip()]


def test_a_scenario_run_gives_one_point_per_main_call_with_its_figures():
    events = headless("run", "--headless", "--scenario", "long-migration")
    log = fold(events)
    mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
    points = log.side("ctxlab")
    assert log.sides() == ["ctxlab"]
    assert [p.index for p in points] == list(range(1, len(mains) + 1))
    assert [(p.chars, p.est_tokens, p.messages, p.breakdown) for p in points] == \
        [(m.chars, m.est_tokens, m.messages, m.breakdown) for m in mains]
    stages = [e for e in events if isinstance(e, ev.Stage)]
    assert stages and sum(len(p.stages) for p in points) + len(log.pending["ctxlab"]) == \
        len(stages)
    # a stage is marked on the request it was made for: the main call right after it
    at = next(i for i, e in enumerate(events) if isinstance(e, ev.Stage))
    following = next(e for e in events[at:] if isinstance(e, ev.ModelRequest)
                     and e.purpose == "main")
    assert next(p for p in points if p.stages).chars == following.chars


def test_a_replay_gives_both_sides_numbered_by_its_steps(tmp_path):
    ok, recorder, _ = replay(CLAUDE, tmp_path)
    assert ok
    log = fold(recorder.events)
    steps = recorder.of(ev.ReplayStep)
    original, ours = log.side("original"), log.side("ctxlab")
    assert [p.index for p in original] == [s.index for s in steps] == [p.index for p in ours]
    assert [(p.chars, p.tokens, p.breakdown) for p in original] == \
        [(s.original_chars, s.original_tokens, s.breakdown) for s in steps]
    assert [p.chars for p in ours] == [s.ctxlab_chars for s in steps]
    responses = [e for e in recorder.events
                 if isinstance(e, ev.ModelResponse) and e.purpose == "original"]
    assert [p.cache_read for p in original] == \
        [(r.usage or {}).get("cache_read_input_tokens") for r in responses]
    assert original[0].cache_read == 14350 and original[0].counted
    recorded = [e for e in recorder.events if isinstance(e, ev.Stage) and e.by != "ctxlab"]
    assert [s for p in original for s in p.stages] == recorded
    assert all(s.by == "ctxlab" for p in ours for s in p.stages)


def test_a_log_folded_when_read_is_the_log_folded_as_the_events_came(tmp_path):
    ok, recorder, _ = replay(CLAUDE, tmp_path)
    assert ok
    events = recorder.events
    later = LaterLog()
    half = len(events) // 2
    for event in events[:half]:
        later.add(event)
    assert later.log.side("original") == fold(events[:half]).side("original")  # read midway
    for event in [*events[half:], ev.Rewind(position=0)]:
        later.add(event)
    assert later.waiting == 1  # the rewind alone: the requests before it are moot (what
    # the replay is came before the half, and was folded then)
    for event in events:
        later.add(event)
    while later.fold(100):  # a slice at a time, as a tab opened late folds
        pass
    twice = fold([*events, ev.Rewind(position=0), *events])
    assert later.log.points == twice.points and later.log.pending == twice.pending
    assert vars(later.log) == vars(twice)
    start = ev.RunStart(provider="scripted", workspace=".", model="m")
    later.add(start)  # it starts the log over
    assert vars(later.log) == vars(fold([start]))


def test_a_rewind_starts_the_sides_over_and_keeps_what_the_replay_is():
    log = RequestLog()
    log.see(ev.ReplayStart(format="claude-code", path="s.jsonl", agent="claude-code",
                           requests=1, compactions=0, lines_read=1, lines_total=1,
                           skipped={}, chars_per_token=3.5, ratio_source="usage",
                           unit="tokens", context_limit=700_000,
                           context_limit_tokens=200_000))
    log.see(ev.ModelRequest(purpose="main", chars=10, est_tokens=3, messages=1))
    log.see(ev.Rewind(position=0))
    assert log.side("ctxlab") == [] and log.context_limit_tokens == 200_000
    assert log.chars_per_token == 3.5


def test_a_watched_clients_compaction_marks_the_request_that_shows_it():
    log = RequestLog()
    log.see(ev.WatchStart(listen="http://127.0.0.1:1", upstream="u", recording="r"))
    log.see(ev.WatchRequest(id=1, method="POST", path="/v1/messages", time="t1",
                            conversation="c1", messages=3, chars=900, est_tokens=250))
    log.see(ev.WatchRequest(id=2, method="POST", path="/v1/messages/count_tokens",
                            time="t2"))  # not a model call
    log.see(ev.WatchRequest(id=3, method="POST", path="/v1/messages", time="t3",
                            conversation="c1", messages=2, chars=300, est_tokens=90))
    shrink = ev.Stage(stage="client_summary", before_chars=900, after_chars=200,
                      before_messages=3, after_messages=1, by="client")
    log.see(shrink)
    log.see(ev.WatchResponse(id=3, status=200, usage={"input_tokens": 10,
                                                       "cache_read_input_tokens": 80}))
    log.see(ev.WatchResponse(id=1, status=200, usage={"input_tokens": 400}))
    first, second = log.side("watched")
    assert (first.index, first.tokens, first.stages) == (1, 400, ())
    assert (second.index, second.tokens, second.cache_read, second.stages) == \
        (3, 90, 80, (shrink,))
    assert log.find("watched", 3) == second and log.find("watched", 2) is None


def test_a_point_changed_is_the_point_replace_gives() -> None:
    """The fold's quick replace gives what ``dataclasses.replace`` gives, leaves the point
    it was given alone, and refuses a field the point does not have."""
    point = RequestPoint(side="ctxlab", index=3, chars=120, est_tokens=30, messages=4,
                         breakdown={"text": 120}, sent=({"role": "user"},))
    changes: dict[str, Any] = {"tokens": 41, "usage": {"input_tokens": 41}, "cache_read": 7,
                               "index": 9, "stages": (), "timestamp": "t", "model": "m"}
    new = changed(point, **changes)
    assert new == replace(point, **changes) and new.sent == point.sent
    assert (point.tokens, point.index) == (None, 3)
    assert [f.name for f in fields(RequestPoint)] == list(vars(new))  # every field, no other
    with pytest.raises(TypeError, match="no field 'token'"):
        changed(point, token=1)
    with pytest.raises(FrozenInstanceError):
        new.tokens = 1  # type: ignore[misc]
