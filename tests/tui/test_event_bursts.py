"""A burst of engine events is drawn once per burst, not once per event.

One ``prepare()`` fires several stages back to back and a replay step brings a request,
its stages and its usage together; the engine emits them without yielding to the UI. The
bridge hands such a burst to the app as one batch (:class:`tui.messages.EngineEvents`),
every handler still sees every event in order, and each panel redraws once for the batch
(:func:`tui.routing.route_batch`): the screen is laid out once for all of it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from core import events as ev
from tests.tui.conftest import wait_for
from tui.app import CtxlabApp
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation, StageMark
from tui.widgets.redraw import update_if_changed
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio

N = 40


def burst(n: int = N) -> list[ev.Event]:
    """What ``n`` quick requests look like to the UI: each one measured, then compacted."""
    events: list[ev.Event] = []
    for i in range(n):
        events.append(ev.ModelRequest(purpose="main", chars=40_000 + i, est_tokens=10_000 + i,
                                      messages=10 + i))
        events.append(ev.Stage(stage="micro_compact", before_chars=40_000 + i,
                               after_chars=20_000 + i, before_messages=10 + i,
                               after_messages=10 + i))
    return events


def count_calls(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], cls: type,
                name: str) -> None:
    original = getattr(cls, name)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts[f"{cls.__name__}.{name}"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)


async def test_a_burst_of_events_redraws_each_panel_once(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(paused=True)  # the scenario waits: only the burst below is drawn
    counts: Counter[str] = Counter()
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        timeline = app.query_one(StageTimeline)
        meter = app.query_one(ContextMeter)
        conversation = app.query_one(Conversation)
        for cls, name in ((ContextMeter, "redraw"), (StageTimeline, "update_subtitle"),
                          (StageTimeline, "move_cursor"), (Conversation, "flush"),
                          (StageTimeline, "render_lines"), (Conversation, "render_lines")):
            count_calls(monkeypatch, counts, cls, name)
        calls_before = app.calls
        assert app.bridge is not None
        for event in burst():  # as the engine emits them: synchronously, in one go
            app.bridge(event)
        # (the History keeps every item, as lines of a run: tui/widgets/item_run)
        await wait_for(pilot, lambda: timeline.row_count == N and sum(
            isinstance(w, StageMark) for w in conversation.all_items()) == N)
        await pilot.pause(0.1)
        # Every event was handled, in order…
        assert [timeline.get_row_at(i)[0] for i in range(N)] == [str(i + 1) for i in range(N)]
        assert meter.history[-N:] == [40_000 + i for i in range(N)]
        assert app.calls == calls_before + N
        assert timeline.cursor_row == N - 1
        assert timeline.border_subtitle.startswith(f"{N} stages")
        # …and each panel drew once for all of them (a few: a frame may split a burst).
        assert counts["ContextMeter.redraw"] <= 2, counts
        assert counts["StageTimeline.update_subtitle"] <= 2, counts
        assert counts["StageTimeline.move_cursor"] <= 2, counts
        assert counts["Conversation.flush"] <= 3, counts
        # The screen renders each panel once per frame it changes in: a few, not per event.
        assert counts["StageTimeline.render_lines"] <= 10, counts
        assert counts["Conversation.render_lines"] <= 10, counts


async def test_one_event_routed_on_its_own_is_drawn_at_once(
        make_app: Callable[..., CtxlabApp]) -> None:
    """``route`` outside a batch (a direct call) still draws before it returns."""
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        timeline = app.query_one(StageTimeline)
        await timeline.route(burst(1)[1])
        assert timeline.row_count == 1
        assert timeline.cursor_row == 0
        assert timeline.border_subtitle.startswith("1 stage")


def test_update_if_changed_compares_styles_as_well_as_text() -> None:
    from textual.content import Content
    from textual.widgets import Static

    shown: list[Any] = []
    widget = Static()
    widget.update = lambda content, **_: shown.append(content)  # type: ignore[method-assign]
    assert update_if_changed(widget, Content.styled("42", "bold"))
    assert not update_if_changed(widget, Content.styled("42", "bold"))
    assert update_if_changed(widget, Content.styled("42", "$error"))
    assert update_if_changed(widget, "42")
    assert not update_if_changed(widget, "42")
    assert len(shown) == 3


async def test_events_emitted_from_a_worker_thread_all_arrive_in_order(
        make_app: Callable[..., CtxlabApp]) -> None:
    """prepare()'s stages emit from a worker thread while the app takes batches on its own:
    none may be lost to a batch taken in between, none reordered."""
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        timeline = app.query_one(StageTimeline)
        assert app.bridge is not None
        bridge = app.bridge
        stages = [e for e in burst(150) if isinstance(e, ev.Stage)]
        posting_threads: set[int] = set()
        real_post = bridge.post

        def post(event: ev.Event) -> None:
            posting_threads.add(threading.get_ident())
            real_post(event)

        bridge.post = post  # type: ignore[method-assign]

        def emit_all() -> None:
            for event in stages:
                bridge(event)

        await asyncio.gather(asyncio.to_thread(emit_all), pilot.pause(0.05))
        await wait_for(pilot, lambda: timeline.row_count >= 150)
        await pilot.pause(0.1)
        assert timeline.row_count == 150
        assert posting_threads == {threading.get_ident()}  # the open batch: the loop's only
        assert [r.event.before_chars for r in timeline.stages] == [
            e.before_chars for e in stages]


async def test_a_long_burst_gives_the_loop_turns_between_events() -> None:
    """Handlers that take longer than a slice: other tasks (a frame, a key) run between two
    events of the batch, each event still reaching every target before the next, and the
    redraws still run once, at the end."""
    import time

    from tui.routing import SLICE, Routed, handles, route_batch

    seen: list[tuple[str, int]] = []
    ticks: list[int] = []

    class Slow(Routed):
        def __init__(self, name: str) -> None:
            self.name = name
            self.redraws = 0

        @handles(ev.ModelRequest)
        def take(self, event: ev.ModelRequest) -> None:
            seen.append((self.name, event.chars))
            end = time.perf_counter() + SLICE  # a handler slower than a slice
            while time.perf_counter() < end:
                pass
            self.redraw_once(self.redraw)

        def redraw(self) -> None:
            self.redraws += 1

    async def ticker() -> None:
        while True:
            ticks.append(len(seen))
            await asyncio.sleep(0)

    targets = [Slow("a"), Slow("b")]
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    events = [ev.ModelRequest(purpose="main", chars=n, est_tokens=1, messages=1)
              for n in range(4)]
    await route_batch(targets, events)
    task.cancel()
    assert seen == [(name, n) for n in range(4) for name in ("a", "b")]
    assert any(0 < t < len(seen) for t in ticks)  # the ticker ran mid-batch
    assert [t.redraws for t in targets] == [1, 1]


async def test_a_task_the_clock_woke_runs_before_the_next_slice() -> None:
    """A task whose timer came due during a slice (the screen's next frame, a timer) runs
    at the slice's end, before the next slice: not a slice later, behind it."""
    import time

    from tui.routing import SLICE, Routed, handles, route_batch

    order: list[str] = []

    class Slow(Routed):
        @handles(ev.ModelRequest)
        def take(self, event: ev.ModelRequest) -> None:
            order.append(f"slice {event.chars}")
            end = time.perf_counter() + SLICE  # each event a slice: a turn after each
            while time.perf_counter() < end:
                pass

    async def timer() -> None:
        await asyncio.sleep(SLICE / 4)  # due during the first slice
        order.append("timer")

    task = asyncio.create_task(timer())
    await asyncio.sleep(0)  # the timer set
    events = [ev.ModelRequest(purpose="main", chars=n, est_tokens=1, messages=1)
              for n in range(3)]
    await route_batch([Slow()], events)
    await task
    assert order == ["slice 0", "timer", "slice 1", "slice 2"]


async def test_a_redraw_working_in_slices_goes_on_with_the_batchs_slice() -> None:
    """A redraw that gives the loop its turns (the History measuring new items) counts the
    time the batch already took: it does not start a whole slice of its own at the end of
    the batch's, holding the loop for two slices."""
    import time

    from tui.routing import SLICE, Routed, Turns, handles, route_batch

    def burn(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    gave: list[bool] = []

    class Panel(Routed):
        @handles(ev.ModelRequest)
        def take(self, event: ev.ModelRequest) -> None:
            burn(SLICE * 0.9)  # most of the batch's slice
            self.redraw_once(self.redraw)

        async def redraw(self) -> None:
            turns = Turns.current()
            for _ in range(3):
                burn(SLICE * 0.3)
                gave.append(await turns.give())

    await route_batch([Panel()], [ev.ModelRequest(purpose="main", chars=1, est_tokens=1,
                                                  messages=1)])
    assert gave[0]  # the batch's slice was used up after the first piece


async def test_a_task_started_during_a_batch_does_not_take_up_its_turns_later() -> None:
    """A task started by a handler copies the batch's context; once the batch is over, it
    works in slices of its own."""
    from tui.routing import Routed, Turns, handles, route_batch

    batch: list[Turns] = []
    later: list[Turns] = []
    go = asyncio.Event()

    async def afterwards() -> None:
        await go.wait()
        later.append(Turns.current())

    class Panel(Routed):
        @handles(ev.ModelRequest)
        def take(self, event: ev.ModelRequest) -> None:
            batch.append(Turns.current())
            tasks.append(asyncio.create_task(afterwards()))

    tasks: list[asyncio.Task[None]] = []
    await route_batch([Panel()], [ev.ModelRequest(purpose="main", chars=1, est_tokens=1,
                                                  messages=1)])
    go.set()
    await tasks[0]
    assert Turns.current() is not batch[0] and later[0] is not batch[0]


async def test_a_batch_whose_run_was_replaced_mid_way_drops_the_rest() -> None:
    """A new run can reset the panels while a long batch yields: the old run's remaining
    events must not reach them; the redraws still run (they draw what the panels hold)."""
    import time

    from tui.routing import SLICE, Routed, handles, route_batch

    class Slow(Routed):
        def __init__(self) -> None:
            self.seen: list[int] = []
            self.redraws = 0

        @handles(ev.ModelRequest)
        def take(self, event: ev.ModelRequest) -> None:
            self.seen.append(event.chars)
            end = time.perf_counter() + SLICE
            while time.perf_counter() < end:
                pass
            self.redraw_once(self.redraw)

        def redraw(self) -> None:
            self.redraws += 1

    target = Slow()
    generation = [1]

    async def new_run() -> None:
        await asyncio.sleep(0)  # the batch's first turn to the loop
        generation[0] = 2

    events = [ev.ModelRequest(purpose="main", chars=n, est_tokens=1, messages=1)
              for n in range(6)]
    starter = asyncio.create_task(new_run())
    await route_batch([target], events, lambda: generation[0] == 1)
    await starter
    assert 0 < len(target.seen) < 6 and target.seen == list(range(len(target.seen)))
    assert target.redraws == 1
