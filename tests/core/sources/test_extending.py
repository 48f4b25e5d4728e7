"""docs/EXTENDING.md, "Adding an event source": a toy source written here, as the recipe
says — a subclass of Source with play() — holds the whole contract, yields to the event loop
between its steps, can be cancelled mid-run, and plays in the workbench from one line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Self

import pytest

from core.events import AssistantText, Recorder, RunEnd, TurnEnd, TurnStart
from core.sources import Capability, Source
from tests.core.sources.test_contract import check_controls, play_out, stream_is_whole


class Ticker(Source):
    """Says ``tick n`` a number of times: one step each, through the gate."""

    name = "ticker"
    capabilities = frozenset({Capability.PAUSE, Capability.STEP, Capability.PACE,
                              Capability.CANCEL})
    step_period = 0.5

    def __init__(self, ticks: int = 5) -> None:
        super().__init__()
        self.ticks = ticks

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        return cls()

    async def play(self) -> None:
        self.emit(TurnStart(request="count"))
        for n in range(self.ticks):
            await self.controls.wait()  # pause, step and pace, as every source has them
            self.emit(AssistantText(delta=f"tick {n}\n"))
            self.turns += 1
        self.emit(TurnEnd(chars=0))


def test_the_toy_source_holds_the_contract(tmp_path: Path) -> None:
    recorder = Recorder()
    assert asyncio.run(play_out(Ticker.sample(tmp_path), recorder))
    stream_is_whole(recorder.events, ok=True)
    assert recorder.events[-1] == RunEnd(ok=True, turns=5)
    controls = Recorder()
    used = asyncio.run(check_controls(Ticker.sample(tmp_path), controls))
    assert set(used) == {Capability.PAUSE, Capability.STEP, Capability.PACE}


def test_it_yields_to_the_event_loop_and_can_be_cancelled_mid_run() -> None:
    recorder = Recorder()
    ticker = Ticker(ticks=100_000)  # at full speed: nothing but the gate between its steps
    beats = 0

    async def heartbeat() -> None:
        nonlocal beats
        while True:
            beats += 1
            await asyncio.sleep(0)

    async def scenario() -> None:
        beat = asyncio.create_task(heartbeat())
        task = asyncio.create_task(ticker.run(recorder))
        while ticker.turns < 50:
            await asyncio.sleep(0)
        ticker.cancel()
        try:
            await task
        finally:
            beat.cancel()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scenario())
    assert beats >= 50  # the loop ran other work between the source's steps
    assert ticker.turns < 100_000  # stopped mid-run, not at the end
    assert [e.type for e in recorder.events[-2:]] == ["error", "run_end"]
    assert recorder.events[-1].ok is False
