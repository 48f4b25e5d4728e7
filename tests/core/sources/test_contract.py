"""The event-source contract, held by every :class:`~core.sources.Source` there is.

The sources are found by import (every module of ``core`` and ``tui``), so a new source is
covered without touching this file; each is played through its own ``sample()``. For each:
exactly one ``run_start`` first and one ``run_end`` last; cancelling mid-run gives
``error(cancelled)`` then ``run_end(ok=False)``; a failure inside ``play()`` gives one
``error`` and ``run_end(ok=False)``; every control it declares works while it runs, and
every control it does not declare raises :class:`~core.sources.Unsupported`.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import core
import tui
from core.config import Thresholds
from core.events import Error, Event, Recorder, RunEnd, RunStart, Stage
from core.sources import Capability, Source, Unsupported


def _modules() -> Iterator[str]:
    for package in (core, tui):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.endswith("__main__"):
                yield info.name


def every_source() -> list[type[Source]]:
    for name in _modules():
        importlib.import_module(name)
    found: list[type[Source]] = []
    stack: list[type[Source]] = [Source]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if not inspect.isabstract(sub) and sub.__module__.startswith(("core.", "tui.")):
                found.append(sub)
    return sorted(set(found), key=lambda c: f"{c.__module__}.{c.__qualname__}")


SOURCES = every_source()


def test_the_sources_are_found() -> None:
    names = {c.__name__ for c in SOURCES}
    assert {"AgentSession", "ReplaySource", "WatchSource"} <= names


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


async def play_out(source: Source, recorder: Recorder) -> bool:
    """Run to the end: a source that serves until told is told once it is idle."""
    task = asyncio.create_task(source.run(recorder))
    if source.offers(Capability.FINISH):
        await until(lambda: source.idle or task.done())
        source.finish()
    return await asyncio.wait_for(task, 60)


def stream_is_whole(events: list[Event], ok: bool) -> None:
    assert isinstance(events[0], RunStart)
    assert sum(isinstance(e, RunStart) for e in events) == 1
    assert sum(isinstance(e, RunEnd) for e in events) == 1
    assert isinstance(events[-1], RunEnd) and events[-1].ok is ok


@pytest.fixture(params=SOURCES, ids=lambda c: c.__qualname__)
def kind(request: pytest.FixtureRequest) -> type[Source]:
    return request.param


def test_a_run_says_run_start_first_and_run_end_once_last(kind: type[Source],
                                                          tmp_path: Path) -> None:
    recorder = Recorder()
    assert asyncio.run(play_out(kind.sample(tmp_path), recorder))
    stream_is_whole(recorder.events, ok=True)


def test_cancelling_mid_run_says_cancelled_then_run_end_not_ok(kind: type[Source],
                                                               tmp_path: Path) -> None:
    recorder = Recorder()
    source = kind.sample(tmp_path)

    async def scenario() -> None:
        if source.offers(Capability.PAUSE):
            source.pause()  # held at its first step: cancelled mid-run, not after it
        task = asyncio.create_task(source.run(recorder))
        await until(lambda: bool(recorder.of(RunStart)))
        await asyncio.sleep(0.05)
        assert not task.done()
        source.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scenario())
    stream_is_whole(recorder.events, ok=False)
    assert recorder.events[-2] == Error(message="run cancelled", kind="cancelled")


class FailOnce:
    """A sink that raises at the first event after ``run_start``: a failure inside the
    source's own ``play()``, wherever it emits from."""

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, event: Event) -> None:
        if not self.failed and not isinstance(event, RunStart):
            self.failed = True
            raise RuntimeError("a failure inside play()")


def test_a_failure_inside_play_is_one_error_and_run_end_not_ok(kind: type[Source],
                                                               tmp_path: Path) -> None:
    recorder = Recorder()
    source = kind.sample(tmp_path)
    source.subscribe(FailOnce())  # before the recorder: the event that failed is not kept
    assert asyncio.run(play_out(source, recorder)) is False
    stream_is_whole(recorder.events, ok=False)
    assert recorder.of(Error) == [Error(message="a failure inside play()",
                                        kind="RuntimeError")]


# -- the controls -----------------------------------------------------------------------------

CALLS: dict[Capability, Callable[[Source], Any]] = {
    Capability.PAUSE: lambda s: s.pause(),
    Capability.STEP: lambda s: s.step(),
    Capability.PACE: lambda s: s.set_speed(2.0),
    Capability.NEXT_STAGE: lambda s: s.until_next_stage(),
    Capability.SEEK: lambda s: s.seek(0),
    Capability.SEND: lambda s: s.send("one more thing"),
    Capability.THRESHOLDS: lambda s: s.set_thresholds(Thresholds(context_limit=9_999)),
    Capability.FINISH: lambda s: s.finish(),
    Capability.CANCEL: lambda s: s.cancel(),
}


def test_every_capability_has_a_call_here() -> None:
    assert set(CALLS) == set(Capability)


def test_an_undeclared_control_raises(kind: type[Source], tmp_path: Path) -> None:
    source = kind.sample(tmp_path)
    for capability in set(Capability) - source.capabilities:
        with pytest.raises(Unsupported):
            CALLS[capability](source)


async def _events(recorder: Recorder, more_than: int) -> None:
    await until(lambda: len(recorder.events) > more_than)


async def check_controls(source: Source, recorder: Recorder) -> list[Capability]:
    """Use each declared control while the source runs, and see it act; the controls used."""
    offers = source.offers
    used: list[Capability] = []
    if offers(Capability.PAUSE):
        source.pause()
    task = asyncio.create_task(source.run(recorder))
    await until(lambda: bool(recorder.of(RunStart)))
    if offers(Capability.PAUSE):
        assert source.paused
        used.append(Capability.PAUSE)
    if offers(Capability.PACE):
        source.set_speed(1e6)
        assert source.controls.delay == 0.0
        used.append(Capability.PACE)
    if offers(Capability.THRESHOLDS):
        value = source.thresholds.replace(context_limit=source.thresholds.context_limit + 1)
        source.set_thresholds(value)
        assert source.thresholds == value
        used.append(Capability.THRESHOLDS)
    if offers(Capability.STEP):
        seen = len(recorder.events)
        source.step()
        await _events(recorder, seen)
        assert source.paused
        used.append(Capability.STEP)
    if offers(Capability.NEXT_STAGE):
        stages = len(recorder.of(Stage))
        source.until_next_stage()
        await until(lambda: len(recorder.of(Stage)) > stages or task.done())
        await until(lambda: not source.seeking or task.done())
        used.append(Capability.NEXT_STAGE)
    if offers(Capability.SEEK):
        ahead = source.position
        source.seek(max(ahead - 1, 0))
        await until(lambda: (source.position == max(ahead - 1, 0) and not source.seeking)
                    or task.done())
        source.seek(ahead + 1)
        await until(lambda: source.position == ahead + 1 or task.done())
        used.append(Capability.SEEK)
    if offers(Capability.SEND):
        await until(lambda: source.awaiting_prompt)
        turns = source.turns
        source.send("one more thing")
        await until(lambda: source.turns > turns)
        used.append(Capability.SEND)
    if offers(Capability.PAUSE):
        source.resume()
        assert not source.paused
    if offers(Capability.FINISH):
        await until(lambda: source.idle or task.done())
        source.finish()
        used.append(Capability.FINISH)
    assert await asyncio.wait_for(task, 60)
    return used


def test_every_declared_control_works_while_running(kind: type[Source],
                                                     tmp_path: Path) -> None:
    recorder = Recorder()
    source = kind.sample(tmp_path)
    used = asyncio.run(check_controls(source, recorder))
    assert set(used) == source.capabilities - {Capability.CANCEL}  # cancel: its own test
    stream_is_whole(recorder.events, ok=True)
