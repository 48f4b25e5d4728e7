"""The pacer routes the bridge's messages in order, every event once, at most once a frame:
a burst after a quiet spell at once, bursts that keep coming together, an older run's not at
all (tui/pacer.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from core import events as ev
from tui.messages import EngineEvents, TextChunk
from tui.pacer import Pacer

pytestmark = pytest.mark.anyio


def batch(generation: int, *chars: int) -> EngineEvents:
    message = EngineEvents(generation)
    message.events.extend(ev.ModelRequest(purpose="main", chars=c, est_tokens=1, messages=1)
                          for c in chars)
    return message


def text(generation: int, words: str) -> TextChunk:
    chunk = TextChunk(generation)
    chunk.parts.append(words)
    return chunk


class Host:
    """What the app gives the pacer: routes that record, a timer run by hand."""

    def __init__(self) -> None:
        self.routed: list[list[int] | str] = []
        self.timers: list[tuple[float, Callable[[], Awaitable[None]]]] = []
        self.generation = 1
        self.stopped = False
        self.pacer = Pacer(self.events, self.text, self.later, lambda: self.generation,
                           stopped=lambda: self.stopped)

    async def events(self, events: list[ev.Event]) -> None:
        self.routed.append([e.chars for e in events if isinstance(e, ev.ModelRequest)])

    async def text(self, words: str) -> None:
        self.routed.append(words)

    def later(self, delay: float, callback: Callable[[], Awaitable[None]]) -> None:
        self.timers.append((delay, callback))

    async def fire(self, stopped: bool = True) -> None:
        """Run the first timer; ``stopped``: the source has stopped sending by then."""
        _, callback = self.timers.pop(0)
        self.stopped = stopped
        await callback()


async def test_a_burst_after_a_quiet_spell_is_routed_at_once() -> None:
    host = Host()
    await host.pacer.add(batch(1, 1, 2))
    assert host.routed == [[1, 2]] and not host.timers


async def test_bursts_that_keep_coming_are_routed_together_in_order() -> None:
    host = Host()
    await host.pacer.add(batch(1, 1))
    first = batch(1, 2)
    await host.pacer.add(first)
    first.events.append(ev.ModelRequest(purpose="main", chars=3, est_tokens=1, messages=1))
    await host.pacer.add(text(1, "said"))
    await host.pacer.add(batch(1, 4))
    await host.pacer.add(batch(1, 5))
    assert host.routed == [[1]] and len(host.timers) == 1  # one routing scheduled
    await host.fire()
    # events added to a batch before it was routed come with it; text keeps its place;
    # consecutive batches are routed as one
    assert host.routed == [[1], [2, 3], "said", [4, 5]]
    assert first.taken


async def test_the_wait_grows_while_bursts_keep_coming_and_resets_after_a_pause() -> None:
    host = Host()
    pacer = host.pacer
    await pacer.add(batch(1, 1))
    waits = []
    for n in range(6):
        await pacer.add(batch(1, n))
        await host.fire()
        waits.append(pacer.wait)
    assert waits == sorted(waits) and waits[-1] == pacer.stream and pacer.streaming
    pacer.last -= 10  # a quiet spell
    await pacer.add(batch(1, 9))
    assert pacer.wait == pacer.frame and not pacer.streaming


async def test_streamed_text_alone_keeps_the_frames_pace() -> None:
    host = Host()
    await host.pacer.add(text(1, "a"))
    for word in "bcd":
        await host.pacer.add(text(1, word))
        await host.fire()
        assert host.pacer.wait == host.pacer.frame and not host.pacer.streaming
    assert host.routed == ["a", "b", "c", "d"]


async def test_an_older_runs_messages_are_dropped() -> None:
    host = Host()
    await host.pacer.add(batch(1, 1))
    old = batch(1, 2)
    await host.pacer.add(old)
    host.generation = 2  # a restart before the routing
    await host.pacer.add(batch(2, 3))
    await host.fire()
    assert host.routed == [[1], [3]] and old.taken


async def test_a_failing_route_still_lets_the_next_one_through() -> None:
    host = Host()

    async def broken(events: list[ev.Event]) -> None:
        raise RuntimeError("the panels are gone")

    host.pacer.events = broken
    with pytest.raises(RuntimeError):
        await host.pacer.add(batch(1, 1))
    host.pacer.events = host.events
    host.pacer.last -= 10
    await host.pacer.add(batch(1, 2))
    assert host.routed == [[2]]
    await asyncio.sleep(0)


async def test_what_comes_while_a_routing_yields_waits_for_it_to_end() -> None:
    """A long routing gives the loop turns (tui.routing.SLICE); a message posted meanwhile
    is routed after it, never by a second routing running beside the first."""
    host = Host()
    release = asyncio.Event()
    started = asyncio.Event()
    active = 0
    overlapped = False

    async def slow(events: list[ev.Event]) -> None:
        nonlocal active, overlapped
        active += 1
        overlapped |= active > 1
        started.set()
        await release.wait()  # as a sliced routing yields mid-batch
        await host.events(events)
        active -= 1

    host.pacer.events = slow
    first = asyncio.create_task(host.pacer.add(batch(1, 1)))
    await started.wait()
    host.pacer.last -= 10  # long enough ago that a new message would otherwise go at once
    await asyncio.wait_for(host.pacer.add(batch(1, 2)), 2)  # it must not wait for the first
    assert host.routed == [] and not host.timers  # taken by the routing under way
    release.set()
    await first
    assert host.routed == [[1]] and len(host.timers) == 1
    await host.fire()
    assert host.routed == [[1], [2]] and not overlapped


async def test_a_stream_that_keeps_coming_waits_and_one_that_stops_is_routed_at_once() -> None:
    """While the source keeps sending, the routing waits for its time (the timer looks
    again a frame later); once the source stopped (at its end, paused), what is pending is
    routed then."""
    host = Host()
    pacer = host.pacer
    await pacer.add(batch(1, 1))
    await pacer.add(batch(1, 2))  # soon after: scheduled
    assert host.routed == [[1]] and len(host.timers) == 1
    await host.fire(stopped=False)  # still sending, not due yet: look again later
    assert host.routed == [[1]] and len(host.timers) == 1
    assert host.timers[0][0] <= pacer.frame
    pacer.due -= 10  # the longest wait is over, though the stream goes on
    await host.fire(stopped=False)
    assert host.routed == [[1], [2]]
    await pacer.add(batch(1, 3))
    await host.fire(stopped=False)
    assert host.routed == [[1], [2]]
    await host.fire(stopped=True)  # the source stopped: route now
    assert host.routed == [[1], [2], [3]]
