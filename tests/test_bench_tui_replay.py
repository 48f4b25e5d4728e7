"""The bench's workbench replay (``bench/tui_replay.py``) ends when the app does."""

from __future__ import annotations

import asyncio
import time

import pytest

from bench.sessions import write_session
from bench.tui_replay import check, headless, workbench
from core.sources.replay import load_recording
from tui.widgets.context_meter import ContextMeter


class Broken(Exception):
    pass


def test_a_small_replay_reaches_its_end_and_shows_the_headless_events(tmp_path):
    recording = load_recording(write_session(tmp_path, 60_000), max_bytes=10_000_000)
    _, _, events = headless(recording, tmp_path / "h")
    run = asyncio.run(workbench(recording, tmp_path / "w"))
    check(run, events)
    assert run.calls > 0 and run.wall > 0


def test_an_app_that_stops_on_an_error_raises_that_error_instead_of_waiting(
        tmp_path, monkeypatch):
    """The replay's end never comes once the app has stopped; waiting for it spun until
    the deadline (an hour by default) and then said only that it did not finish."""
    def broken(self, event):
        raise Broken("a request handler failed")

    monkeypatch.setattr(ContextMeter, "show_request", broken)
    recording = load_recording(write_session(tmp_path, 60_000), max_bytes=10_000_000)
    began = time.monotonic()
    with pytest.raises(Broken, match="a request handler failed"):
        asyncio.run(workbench(recording, tmp_path / "w", timeout=60.0))
    assert time.monotonic() - began < 30


def test_an_app_that_exits_without_an_error_is_said_to_have_stopped(tmp_path, monkeypatch):
    def leave(self, event):
        self.app.exit()

    monkeypatch.setattr(ContextMeter, "show_request", leave)
    recording = load_recording(write_session(tmp_path, 60_000), max_bytes=10_000_000)
    began = time.monotonic()
    with pytest.raises(RuntimeError, match=r"the workbench stopped \(exit code 0\)"):
        asyncio.run(workbench(recording, tmp_path / "w", timeout=60.0))
    assert time.monotonic() - began < 30
