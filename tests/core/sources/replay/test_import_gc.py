"""The cyclic collector is paused while a session is parsed, and restored whatever happens.

Why it is paused is in ``core.sources.replay.reading.cycle_collection_paused``; how much it saves is
the ``import CPU per MB`` row of ``bench/bench_replay.py``.
"""

from __future__ import annotations

import gc

import pytest

import core.sources.replay as replay
from core.sources.replay import ReplayError, load_recording
from tests.core.sources.replay.conftest import CLAUDE


@pytest.fixture
def collector_state():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_paused_while_the_file_is_parsed(monkeypatch, collector_state):
    seen: list[bool] = []
    real = replay.LOADERS["claude-code"]

    def spy(path, text):
        seen.append(gc.isenabled())
        return real(path, text)

    monkeypatch.setitem(replay.LOADERS, "claude-code", spy)
    gc.enable()
    recording = load_recording(CLAUDE)
    assert seen == [False, False]  # the session, then its subagent transcript (its totals)
    assert gc.isenabled()
    assert len(recording.exchanges) == 6


def test_the_collector_comes_back_when_parsing_fails(monkeypatch, collector_state):
    def broken(path, text):
        raise RuntimeError("a bug in a loader")

    monkeypatch.setitem(replay.LOADERS, "claude-code", broken)
    gc.enable()
    with pytest.raises(RuntimeError):
        load_recording(CLAUDE)
    assert gc.isenabled()


def test_an_empty_recording_error_restores_it_too(tmp_path, collector_state):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "summary", "uuid": "x", "leafUuid": "y"}\n', encoding="utf-8")
    gc.enable()
    with pytest.raises(ReplayError):
        load_recording(path, "claude-code")
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled(collector_state):
    gc.disable()
    load_recording(CLAUDE)
    assert not gc.isenabled()
