"""Event sources: everything that produces the events the workbench, the headless log and
``compare`` render.

ctxlab's own agent loop (:mod:`core.sources.agent`), a replay of a recorded session
(:mod:`core.sources.replay`) and a proxy watching another agent (:mod:`core.sources.watch`)
are all a :class:`Source`. The base class owns the contract, so no source can get it wrong:

* :meth:`Source.run` is the one template: :meth:`~Source.open` says ``run_start``,
  :meth:`~Source.play` does the work, any exception becomes one ``error`` event through one
  translation (:func:`error_event`), and exactly one ``run_end`` comes last — ``ok`` only when
  the source finished its work (not cancelled, nothing failed on the way).
* The controls live here too, backed by the one gate (:mod:`core.sources.controls`). A source
  declares the :class:`Capability` s it honours; a front end asks :meth:`Source.offers` and
  calls the method, and calling a control the source does not declare raises
  :class:`Unsupported` instead of doing nothing.

A new source subclasses :class:`Source`, sets ``name`` and ``capabilities``, and writes
``play()`` (awaiting ``self.controls.wait()`` between its steps, emitting with
``self.emit``); ``open()`` and ``close()`` are there when it has something to set up or
release, and ``sample()`` makes a small instance that runs offline — what the contract test
(``tests/core/sources/test_contract.py``) plays for every source it finds.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import os
from pathlib import Path
from typing import Any, ClassVar, Self

from core.config import Thresholds
from core.events import Error, EventT, RunEnd, RunStart, Sink, Stage
from core.providers.base import ProviderError
from core.sources.controls import MAX_SPEED, Controls

__all__ = ["MAX_SPEED", "Capability", "Controls", "Source", "Unsupported", "error_event"]


class Capability(enum.StrEnum):
    """The optional controls a source can honour (each names the methods it promises)."""

    PAUSE = "pause"  # pause(), resume(), paused
    STEP = "step"  # step(count)
    PACE = "pace"  # set_speed(speed)
    NEXT_STAGE = "next_stage"  # until_next_stage(kind): play on until a stage, then pause
    SEEK = "seek"  # seek(position), position: go to a step, back as well as forward
    SEND = "send"  # send(prompt): one more request in the same session
    THRESHOLDS = "thresholds"  # set_thresholds(value)
    FINISH = "finish"  # finish(): no more input, end normally (a live session, a watch)
    CANCEL = "cancel"  # cancel(): stop at the next await; run_end still comes


class Unsupported(RuntimeError):
    """A control was called on a source that does not declare it."""


def error_event(exc: BaseException) -> Error:
    """The one translation of a failure into the ``error`` event every front end shows."""
    if isinstance(exc, asyncio.CancelledError):
        return Error(message="run cancelled", kind="cancelled")
    text = str(exc)
    named = getattr(exc, "kind", None)  # an error that names its kind (the API's, the watch's)
    kind = named if isinstance(named, str) and named else type(exc).__name__
    if isinstance(exc, ProviderError):  # the API's answer: its first line says it
        text = text.splitlines()[0] if text else ""
    return Error(message=text or type(exc).__name__, kind=kind)


class Source(abc.ABC):
    """A stream of events with the controls it declares; see the module docstring."""

    name: str = "source"
    capabilities: frozenset[Capability] = frozenset({Capability.CANCEL})
    # seconds per step and per streamed word at speed ×1 (see Controls)
    step_period: ClassVar[float] = 0.0
    word_period: ClassVar[float] = 0.0

    def __init__(self, emit: Sink | None = None, *, paused: bool = False) -> None:
        self.controls = Controls(paused=paused, step_period=self.step_period,
                                 word_period=self.word_period)
        self.thresholds = Thresholds()  # the limits in force (a source may have none)
        self.turns = 0  # what run_end reports: turns played, requests replayed
        self.failed = False  # a failure was reported and the source went on (a live turn)
        self.started = False
        self.ended = False
        self._sinks: list[Sink] = [emit] if emit is not None else []
        self._task: asyncio.Task[Any] | None = None

    # -- what a source writes ---------------------------------------------------------------

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        """A small instance of this source that runs offline in ``workdir``, with no model,
        recording or client of anyone's: every source can show itself, and the contract
        test plays each one this way."""
        raise NotImplementedError(f"{cls.__name__} has no sample(): give it one")

    async def open(self) -> RunStart:
        """Set up what the run needs and say what runs (the ``run_start`` event)."""
        return RunStart(provider=self.name, workspace=os.getcwd())

    @abc.abstractmethod
    async def play(self) -> None:
        """Do the work: emit events, await ``self.controls.wait()`` before each step."""

    async def close(self) -> None:  # noqa: B027 - optional: most sources hold nothing
        """Release what :meth:`open` took; runs once, before ``run_end``, however it ended."""

    # -- the event stream -------------------------------------------------------------------

    def subscribe(self, sink: Sink) -> None:
        """Also hand every event to ``sink``, after the sinks already subscribed."""
        self._sinks.append(sink)

    def emit(self, event: EventT) -> EventT:
        """Hand ``event`` to every sink in order; a sink that returns an event (an
        :class:`~core.events.Emitter` stamping ``t``) hands that one on."""
        for sink in list(self._sinks):
            out = sink(event)
            if isinstance(out, type(event)):
                event = out
        if isinstance(event, Stage):
            self.controls.saw_stage(event.stage)
        return event

    def report(self, exc: BaseException) -> None:
        """A failure the source survives (a live turn): said once, and ``ok`` is gone."""
        self.failed = True
        self.emit(error_event(exc))

    # -- the template -----------------------------------------------------------------------

    async def run(self, emit: Sink | None = None) -> bool:
        """Open, play, end: True when the source finished its work (the contract above)."""
        if self.started:
            raise RuntimeError(f"{self.name}: a source runs once")
        if emit is not None:
            self.subscribe(emit)
        self.started = True
        self._task = asyncio.current_task()
        ok = False
        try:
            self.emit(await self.open())
            await self.play()
            ok = not self.failed
        except asyncio.CancelledError:
            self.emit(error_event(asyncio.CancelledError()))
            raise
        except Exception as exc:
            self.report(exc)
        finally:
            try:
                await self.close()
            finally:
                self.ended = True
                self.emit(RunEnd(ok=ok, turns=self.turns))
        return ok

    @property
    def running(self) -> bool:
        return self.started and not self.ended

    # -- controls ---------------------------------------------------------------------------

    def offers(self, capability: Capability) -> bool:
        return capability in self.capabilities

    def _require(self, capability: Capability) -> None:
        if capability not in self.capabilities:
            raise Unsupported(f"{self.name} does not offer {capability.value}")

    @property
    def paused(self) -> bool:
        return self.controls.paused

    @property
    def seeking(self) -> bool:
        return self.controls.seeking

    def pause(self) -> None:
        self._require(Capability.PAUSE)
        self.controls.pause()

    def resume(self) -> None:
        self._require(Capability.PAUSE)
        self.controls.resume()

    def step(self, count: int = 1) -> None:
        self._require(Capability.STEP)
        self.controls.step(count)

    def set_speed(self, speed: float) -> None:
        """A multiplier on the source's pace (0 or very high: as fast as it can)."""
        self._require(Capability.PACE)
        self.controls.set_speed(speed)

    def until_next_stage(self, kind: str | None = None) -> None:
        """Play on until a stage (named ``kind``, when given), then pause."""
        self._require(Capability.NEXT_STAGE)
        self.controls.until_next_stage(kind)

    @property
    def position(self) -> int:
        """Where a seekable source stands (what :meth:`seek` counts): 0 before the first."""
        return self.turns

    @property
    def heading(self) -> int:
        """Where the source is going: a seek's position while it seeks one, else where it
        stands (two steps back in a row go back two, not one)."""
        target = self.controls.target
        return target if target is not None else self.position

    def seek(self, position: int) -> None:
        self._require(Capability.SEEK)
        self.controls.seek(position)

    def send(self, prompt: str) -> None:
        self._require(Capability.SEND)
        self.controls.send(prompt)

    @property
    def awaiting_prompt(self) -> bool:
        """Idle until the next :meth:`send` (a prompt sent now starts a turn at once)."""
        return self.controls.waiting_for_prompt

    @property
    def idle(self) -> bool:
        """Nothing in progress that :meth:`finish` would cut short."""
        return self.controls.idle

    def original(self, tool_use_id: str) -> Any:
        """A tool result's original content, if the source still has it (else None)."""
        return None

    def set_thresholds(self, value: Thresholds) -> None:
        """New limits from the next step on."""
        self._require(Capability.THRESHOLDS)
        self.thresholds = value

    def finish(self) -> None:
        self._require(Capability.FINISH)
        self.controls.finish()

    def cancel(self) -> None:
        """Stop at the next await; ``error(cancelled)`` and ``run_end`` still come."""
        self._require(Capability.CANCEL)
        if self._task is not None and not self._task.done():
            self._task.cancel()
