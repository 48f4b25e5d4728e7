"""A big Claude Code session replayed to its end at top speed: in the workbench and headless.

The two runs of one round replay the same recording (loaded once, outside the clocks) in
this process, one after the other in an order that alternates from round to round, so a
neighbour's load falls on both alike. Each is timed twice: wall time, what a user waits for
to reach the end (and what the target judges), and CPU time (``time.process_time``: the
pipeline's worker threads count too, a shared machine's other processes do not), shown
beside it.

* **headless** — :class:`ReplaySource` run to its end with the options of ``ctxlab replay
  --headless`` (no worker-thread hop), its events kept only to check the workbench against;
* **workbench** — the app on the same source as ``ctxlab replay PATH --speed 0`` opens it
  (paused, then played at top speed), from the resume until the last request's events are
  routed and drawn. Meanwhile a 5 ms interval timer measures the longest gap between its
  ticks (the event loop's worst stall) and each ``replay_step`` notes the CPU clock, for the
  per-request cost along the session (last tenth ÷ first tenth).

The final screen is checked against the headless run's events on every round (each stage's
kind and sizes in the Stages panel, the meter's figure for every main request, the request
count), so a fast run that dropped events could not pass for a fast run.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.rounds import rotations
from core.events import Event, ModelRequest, ReplayStep, Stage


@dataclass
class WorkbenchRun:
    cpu: float  # seconds, from the resume to the final state drawn
    stall: float  # seconds: the longest gap between the 5 ms timer's ticks
    steps: list[float] = field(default_factory=list)  # process CPU clock at each step
    stages: list[tuple[str, int, int]] = field(default_factory=list)  # the Stages panel's
    meter: list[int] = field(default_factory=list)  # the meter's figure per request
    calls: int = 0  # the requests the workbench counted
    wall: float = 0.0  # seconds, from the resume to the final state drawn

    def growth(self) -> float:
        """Per-request cost of the last tenth of the session ÷ that of the first tenth."""
        tenth = max(1, (len(self.steps) - 1) // 10)
        if len(self.steps) < 3:
            return 1.0
        first = (self.steps[tenth] - self.steps[0]) / tenth
        last = (self.steps[-1] - self.steps[-1 - tenth]) / tenth
        return last / first if first > 0 else float("inf")


def headless(recording: Any, workdir: Path) -> tuple[float, float, list[Event]]:
    """CPU and wall seconds of the replay alone, and its events (kept only to check the
    workbench)."""
    from core.sources.replay.source import ReplayOptions, ReplaySource

    events: list[Event] = []
    start, began = time.process_time(), time.perf_counter()
    ok = asyncio.run(ReplaySource(recording, ReplayOptions(
        workdir=workdir, seekable=False, stages_in_thread=False)).run(events.append))
    cpu, wall = time.process_time() - start, time.perf_counter() - began
    if not ok:
        raise RuntimeError("the headless replay failed")
    return cpu, wall, events


async def workbench(recording: Any, workdir: Path, timeout: float = 3600.0) -> WorkbenchRun:
    """The workbench replaying ``recording`` at top speed; see the module docstring."""
    from core.sources.replay.source import ReplayOptions, ReplaySource
    from tui.app import AppConfig, CtxlabApp
    from tui.widgets.context_meter import ContextMeter
    from tui.widgets.stage_timeline import StageTimeline

    def make(folder: Path) -> ReplaySource:
        return ReplaySource(recording, ReplayOptions(workdir=folder, hold_at_end=True))

    app = CtxlabApp(AppConfig(scenario=None, source=make, workspace=workdir, paused=True,
                              speed=1000.0, provider="replay", model=recording.model,
                              theme="ctxlab-dark"))
    steps: list[float] = []
    ticks: list[float] = []
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.3)
        source = app.source
        assert isinstance(source, ReplaySource)  # it has a total: the steps to come
        source.subscribe(lambda e: steps.append(time.process_time())
                         if isinstance(e, ReplayStep) else None)
        app.set_interval(0.005, lambda: ticks.append(time.perf_counter()))
        await pilot.pause(0.05)
        ticks.clear()
        start, began = time.process_time(), time.perf_counter()
        source.resume()
        deadline = time.monotonic() + timeout
        stopped = False
        # the last step emitted (its events follow its stages) and routed
        while len(steps) < source.total or not app.pacer.idle:
            if app.return_code is not None:
                # the app stopped (an error in a handler or a frame ends it): leaving the
                # block re-raises that error, where waiting would spin until the deadline
                stopped = True
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the workbench replay did not finish")
            await asyncio.sleep(0.005)
        else:
            await pilot.pause()  # the last routing drawn
            cpu, wall = time.process_time() - start, time.perf_counter() - began
            stall = max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)
            stages = [(r.event.stage, r.event.before_chars, r.event.after_chars)
                      for r in app.query_one(StageTimeline).stages]
            meter = list(app.query_one(ContextMeter).history)
    if stopped:  # and with no error to re-raise
        raise RuntimeError(f"the workbench stopped (exit code {app.return_code}) at step "
                           f"{len(steps)} of {source.total} of the replay")
    return WorkbenchRun(cpu, stall, steps, stages, meter, app.calls, wall)


def check(run: WorkbenchRun, events: list[Event]) -> None:
    """Raise unless the workbench ended showing what the headless run's events say."""
    stages = [(e.stage, e.before_chars, e.after_chars) for e in events if isinstance(e, Stage)]
    mains = [e.chars for e in events if isinstance(e, ModelRequest) and e.purpose == "main"]
    if run.stages != stages:
        raise RuntimeError(f"the workbench's Stages panel ended with {len(run.stages)} "
                           f"stages, not the events' {len(stages)} (or not the same ones)")
    if run.meter != mains or run.calls != len(mains):
        raise RuntimeError(f"the workbench's meter counted {run.calls} requests "
                           f"({len(run.meter)} figures), the events {len(mains)}")


@dataclass
class Rounds:
    """Per-round figures of the interleaved runs."""

    ratios: list[float] = field(default_factory=list)  # workbench CPU ÷ headless CPU
    walls: list[float] = field(default_factory=list)  # workbench wall ÷ headless wall
    headless: list[float] = field(default_factory=list)
    workbench: list[float] = field(default_factory=list)
    growth: list[float] = field(default_factory=list)
    stalls: list[float] = field(default_factory=list)

    def median(self, values: list[float]) -> float:
        return statistics.median(values)


def replay_rounds(path: Path, root: Path, rounds: int) -> Rounds:
    """``rounds`` rounds of headless and workbench replays of ``path``, order alternating."""
    from core.sources.replay import load_recording

    recording = load_recording(path, max_bytes=200_000_000)
    out = Rounds()
    for n, order in rotations(("headless", "workbench"), rounds):
        figures: dict[str, Any] = {}
        for kind in order:
            folder = root / f"{kind}-{n}"
            if kind == "headless":
                figures[kind] = headless(recording, folder)
            else:
                figures[kind] = asyncio.run(workbench(recording, folder))
        cpu, wall, events = figures["headless"]
        run: WorkbenchRun = figures["workbench"]
        check(run, events)
        out.headless.append(cpu)
        out.workbench.append(run.cpu)
        out.ratios.append(run.cpu / cpu)
        out.walls.append(run.wall / wall)
        out.growth.append(run.growth())
        out.stalls.append(run.stall)
    return out
