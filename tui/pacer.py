"""Route the engine's bursts to the panels at most once per frame.

A replay at top speed yields to the event loop after every recorded request, so each request
reached the panels as a batch of its own (:mod:`tui.messages`): every panel redrew once per
request, the History mounted and the tables re-rendered once per request, and the screen
was laid out again for each — far more work than the one frame a person can see. The pacer
keeps the batches (and streamed text) that arrive within :data:`FRAME` of the last routing
and routes them together once the frame has passed: consecutive batches become one
:func:`~tui.routing.route_batch`, so each panel redraws once for all of them, and only the
newest state is drawn. The first burst after a quiet spell is routed at once, so a step or
a single live turn is drawn with no added delay. While bursts keep coming (a replay at top
speed) the wait doubles at each routing, up to :data:`STREAM` (a stream that stops — the
source waits at its gate for a person — is routed within a frame: its last state is not
held back): drawing the whole screen costs
the same however many requests it shows, and a screen redrawn thirty times a second took
most of the replay's time to show states no one could read at that pace. Streamed text
alone (a live answer) keeps the frame's pace: it is read as it comes.

Nothing is skipped: every event still reaches every handler, in the order emitted. Text and
events keep their order too, since the bridge seals a batch when text starts (and the other
way round), and the pacer routes the messages in the order they were posted. A message of a
run that has since been replaced (an older ``generation``) is dropped, as the app did.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

from core.events import Event
from tui.messages import EngineEvents, TextChunk

FRAME = 1 / 30  # seconds: two frames at 60 Hz, the wait after a quiet spell
STREAM = 0.5  # seconds: the longest wait, reached while bursts of events keep coming

RouteEvents = Callable[[list[Event]], Awaitable[None]]
RouteText = Callable[[str], Awaitable[None]]
Later = Callable[[float, Callable[[], Awaitable[None]]], object]


def runs(messages: Sequence[EngineEvents | TextChunk]) -> list[list[Event] | str]:
    """The messages' contents in order, consecutive batches joined into one list of events
    (each message is taken: what its sender adds afterwards goes to a new one)."""
    out: list[list[Event] | str] = []
    for message in messages:
        if isinstance(message, TextChunk):
            out.append(message.take())
        elif out and isinstance(out[-1], list):
            out[-1].extend(message.take())
        else:
            out.append(message.take())
    return out


class Pacer:
    """Collects the bridge's messages and routes them in order, at most once a frame.

    ``later(delay, callback)`` schedules the next routing (the app's ``set_timer``);
    ``generation()`` is the run now shown, so a message of an older run is dropped."""

    def __init__(self, events: RouteEvents, text: RouteText, later: Later,
                 generation: Callable[[], int], frame: float = FRAME,
                 stream: float = STREAM,
                 stopped: Callable[[], bool] = lambda: False) -> None:
        self.events = events
        self.text = text
        self.later = later
        self.generation = generation
        self.stopped = stopped  # the stream stopped: nothing more comes until a person acts
        self.frame = frame
        self.stream = stream
        self.wait = frame  # the wait in force: grows while bursts keep coming
        self.pending: list[EngineEvents | TextChunk] = []
        self.streaming = False  # the routing under way came soon after the last one
        self.routing = False  # a routing is under way (its handlers may await)
        self.scheduled = False
        self.last = -frame  # when the last routing ended (time.monotonic)
        self.due = 0.0  # when the routing scheduled must happen at the latest

    async def add(self, message: EngineEvents | TextChunk) -> None:
        """A message from the bridge: route now if a frame has passed, else soon."""
        self.pending.append(message)
        if self.scheduled or self.routing:  # the routing under way takes it when it ends
            return
        wait = self.last + self.wait - time.monotonic()
        if wait <= 0:  # a quiet spell: at once, and the next wait is a frame again
            self.wait = self.frame
            self.streaming = False
            await self.flush()
        else:
            self.schedule(wait)

    def schedule(self, wait: float) -> None:
        """The next routing in ``wait`` seconds at the latest, sooner if the stream stops."""
        self.scheduled = True
        self.due = time.monotonic() + wait
        self.later(min(wait, self.frame), self.tick)

    async def tick(self) -> None:
        """Route when the wait is over, or as soon as the stream stopped (a replay reached
        its end or was paused): what it sent last is the state to show, not half a second
        later. A stream that is merely slow for a moment is not taken for stopped (a long
        frame holds the engine back too, and routing each trickle costs a frame each)."""
        now = time.monotonic()
        if now < self.due and not self.stopped():
            self.later(min(self.due - now, self.frame), self.tick)
            return
        await self.later_flush()

    async def later_flush(self) -> None:
        """The routing of a burst that came soon after another: the next may wait longer,
        unless all that came is streamed text."""
        self.streaming = any(isinstance(m, EngineEvents) for m in self.pending)
        self.wait = min(self.wait * 2, self.stream) if self.streaming else self.frame
        await self.flush()

    async def flush(self) -> None:
        """Route everything pending, in order (what arrives meanwhile waits its turn)."""
        self.scheduled = False
        current = self.generation()
        pending = [m for m in self.pending if m.generation == current]
        for message in self.pending:
            if message.generation != current:
                message.take()  # an older run's: its sender starts a new message
        self.pending = []
        self.routing = True
        try:
            for run in runs(pending):
                if isinstance(run, str):
                    await self.text(run)
                elif run:
                    await self.events(run)
        finally:
            self.routing = False
            self.last = time.monotonic()
        if self.pending and not self.scheduled:  # what came while the routing yielded
            self.schedule(self.wait)

    @property
    def idle(self) -> bool:
        """Nothing waiting, nothing scheduled, nothing being routed."""
        return not self.pending and not self.scheduled and not self.routing
