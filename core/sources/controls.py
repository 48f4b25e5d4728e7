"""The one gate every source passes between two steps: pause, step, pace, next stage, seek.

A *step* is what a source does between two looks at the gate: ctxlab's loop makes one main
model call, a replay plays one recorded request (or the recorded agent's compaction). The
source awaits :meth:`Controls.wait` before each step; a person (the workbench's keys, a
test) only calls the other methods, so pausing a live run and pausing a replay are the same
thing, and a new source gets every control by awaiting one call.

:meth:`Controls.wait` never blocks the thread: it awaits an :class:`asyncio.Event`, so a
cancelled task stops there at once. The setters only change fields, so they are safe to call
from a sink, even one that runs in ``prepare()``'s worker thread (the learner's auto-pause);
they wake the waiting source through the loop that is waiting, never from another thread.

Besides the flow, the gate carries the two inputs a person gives a running source: prompts
(:meth:`send`, :meth:`next_prompt`) and the request to finish (:meth:`finish`: a live
session stops waiting for prompts, a watch stops serving).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable

MAX_SPEED = 100.0  # at or above: no pause between steps at all ("as fast as it can")
MAX_DELAY = 100.0  # seconds: the longest pause between two steps, at any speed


class Controls:
    """Running, paused, stepping, playing until the next stage, or seeking a position.

    ``step_period`` is the pause before a step at speed ×1 (a presenter's pace: ctxlab's
    loop waits before each model call, a replay between recorded requests); ``word_period``
    the pause between streamed words of a scripted reply. Speed divides both.
    """

    def __init__(self, *, paused: bool = False, step_period: float = 0.0,
                 word_period: float = 0.0) -> None:
        self._paused = paused
        self._budget = 0  # steps let through while paused
        self._until_stage = False
        self._stage_kind: str | None = None  # the stage name played to (None: any)
        self._stage_seen = False
        self._target: int | None = None  # a position to seek
        self._finished = False
        self._prompts: collections.deque[str] = collections.deque()
        self._waiting_for_prompt = False
        self._serving = False  # in until_finished(): nothing in progress but serving
        self._asleep = False  # the source waits at the gate until someone pokes it
        self.step_period = step_period
        self.word_period = word_period
        self.speed = MAX_SPEED
        # the pause itself; a test replaces it to see the pauses without waiting them
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what a person sees ---------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        """Held (or about to be held) at the gate: paused, stepping, or seeking."""
        return self._paused

    @property
    def seeking(self) -> bool:
        """Playing on towards the next stage or a position, after which it pauses."""
        return self._until_stage or self._target is not None

    @property
    def target(self) -> int | None:
        """The position a seek is going to (None: not seeking one)."""
        return self._target

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def waiting_for_prompt(self) -> bool:
        """The source is idle until :meth:`send` (a live session between two turns), and
        no prompt sent is still waiting to be taken."""
        return self._waiting_for_prompt and not self._prompts

    @property
    def idle(self) -> bool:
        """Nothing in progress that finishing would cut short: waiting for a prompt, or
        serving until told to finish."""
        return self._waiting_for_prompt or self._serving

    @property
    def asleep(self) -> bool:
        """The source is waiting at the gate for a person (paused, held at its end, waiting
        for a prompt): it emits nothing until poked, so what it emitted last is the state
        to show now. A watch serving its proxy is not: its traffic keeps coming."""
        return self._asleep

    @property
    def delay(self) -> float:
        """Seconds before each step at the current speed."""
        return 0.0 if self.speed >= MAX_SPEED else min(self.step_period / self.speed, MAX_DELAY)

    @property
    def word_delay(self) -> float:
        """Seconds between streamed words; none on the way to a stage or a position (a jump
        shows where it lands, not the words on the way at the presenter's pace)."""
        if self.seeking or self.speed >= MAX_SPEED:
            return 0.0
        return min(self.word_period / self.speed, MAX_DELAY)

    # -- what a person does ---------------------------------------------------------------------

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._budget = 0
        self._until_stage = self._stage_seen = False
        self._target = None
        self._poke()

    def step(self, count: int = 1) -> None:
        """Let ``count`` more steps through, then stay paused."""
        self._paused = True
        self._budget += max(count, 0)
        self._poke()

    def until_next_stage(self, kind: str | None = None) -> None:
        """Play on until a step that produced a ``stage`` event (one named ``kind``, when
        given: the next summary, not the next of any stage), then pause after it."""
        self._paused = True
        self._until_stage, self._stage_seen = True, False
        self._stage_kind = kind
        self._poke()

    def seek(self, position: int) -> None:
        """Go to ``position`` (the source says what it counts) and pause there."""
        self._paused = True
        self._budget = 0
        self._until_stage = self._stage_seen = False
        self._target = max(position, 0)
        self._poke()

    def set_speed(self, speed: float) -> None:
        """A multiplier on the periods; 0 or :data:`MAX_SPEED` and above: no pauses."""
        self.speed = MAX_SPEED if speed <= 0 else speed

    def send(self, prompt: str) -> None:
        if self._finished:
            raise RuntimeError("the source has finished: it takes no more prompts")
        self._prompts.append(prompt)
        self._poke()

    def finish(self) -> None:
        """No more input: the source ends its work normally (after the step in progress)."""
        self._finished = True
        self._poke()

    # -- what the source does -------------------------------------------------------------------

    def saw_stage(self, kind: str = "") -> None:
        """A step produced a stage named ``kind``: a run to the next stage (of that kind,
        when one was asked for) pauses at the next gate."""
        if self._until_stage and self._stage_kind in (None, kind):
            self._stage_seen = True

    def behind(self, position: int) -> bool:
        """A seek asks for a position before ``position``: the source must go back."""
        return self._target is not None and self._target < position

    async def wait(self, position: int | None = None) -> None:
        """Before a step: hold while paused, let steps through, then wait the pace.

        A source that can seek passes its ``position``; while a seek target lies ahead the
        gate lets every step through at once, and when it lies behind the gate returns so
        the source can go back (:meth:`behind`)."""
        while True:
            if self._target is not None and position is not None:
                if position != self._target:
                    await asyncio.sleep(0)  # seeking: no pause, no pace, but a yield
                    return
                self._target = None  # arrived: held here
            if self._until_stage and self._stage_seen:
                self._until_stage = self._stage_seen = False  # the stage came: held here
            if not self._paused or self._budget or self._until_stage or self._finished:
                break
            await self._sleep_until_poked()
        if self._paused and self._budget:
            self._budget -= 1
        if not self._until_stage and self.delay > 0:
            await self.sleep(self.delay)
        else:  # every step yields: a front end draws, and a cancel lands, between steps
            await asyncio.sleep(0)

    async def next_prompt(self) -> str | None:
        """The next prompt sent, in order; None once :meth:`finish` was called."""
        self._waiting_for_prompt = True
        try:
            while not self._prompts and not self._finished:
                await self._sleep_until_poked()
        finally:
            self._waiting_for_prompt = False
        return self._prompts.popleft() if self._prompts else None

    async def hold(self, position: int) -> None:
        """At the end of what there is to play: idle and paused until :meth:`finish`, or a
        seek to a position before ``position`` (one at or past it has nowhere to go)."""
        self._paused = True
        self._serving = True
        try:
            while not self._finished and not self.behind(position):
                if self._target is not None:
                    self._target = None  # ahead of the end: stay here
                await self._sleep_until_poked()
        finally:
            self._serving = False

    async def until_finished(self) -> None:
        """Until :meth:`finish` (a source that serves until told to stop)."""
        self._serving = True
        try:
            while not self._finished:
                await self._sleep_until_poked(asleep=False)  # what it serves still comes
        finally:
            self._serving = False

    # -- waking ---------------------------------------------------------------------------------

    async def _sleep_until_poked(self, *, asleep: bool = True) -> None:
        """Until a setter pokes; ``asleep``: the source emits nothing meanwhile (a watch
        serving its proxy goes on emitting what passes through it)."""
        if self._wake is None:
            self._wake = asyncio.Event()
            self._loop = asyncio.get_running_loop()
        self._wake.clear()
        self._asleep = asleep
        try:
            await self._wake.wait()
        finally:
            self._asleep = False

    def _poke(self) -> None:
        """Wake the waiting source, from whichever thread the setter was called in."""
        wake, loop = self._wake, self._loop
        if wake is None or loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)
