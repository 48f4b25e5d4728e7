"""Per-widget event handling: each panel says which engine events it draws.

A widget (or the app) mixes in :class:`Routed` and marks methods with
:func:`handles`; the app hands every engine event to each routed widget it composed, and
each one calls its own handlers for that event's type. No central switch knows every
widget: adding a panel is its widget (with its handlers) plus one row in :mod:`tui.panels`.
Every routed panel also has :meth:`Routed.reset`, which the app calls when a run starts (or
its source goes back), so no panel carries a run's state into the next.

Events come in bursts: one ``prepare()`` reports several stages at once, a replay step
brings a request, its stages and its usage together, and the app receives them as one
batch (:class:`~tui.messages.EngineEvents`). :func:`route_batch` calls every handler for
every event, in order, but a handler asks for its *drawing* with
:meth:`Routed.redraw_once`: the redraw runs once, after the whole batch, however many of
its events asked for it. A burst of fifty model requests re-renders the Context meter once,
not fifty times, and the screen is laid out once for all of it.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from core.config import Thresholds
from core.events import Event

if TYPE_CHECKING:
    from textual.widget import Widget

    from core.views.requests import LaterLog

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "_ctxlab_handles"
# Seconds of handlers after which a batch gives the event loop a turn: a replay's burst
# holds hundreds of requests, and handled in one go it froze the screen for as long (a
# frame at 60 Hz is about 17 ms). Keys still wait for the batch's end: they come through
# the app's message queue, which is routing it.
SLICE = 0.008
# How a slice gives its turn: asleep for a moment rather than ``sleep(0)``. A task woken by
# the clock (the screen's next frame, any timer) is readied one turn of the loop after its
# time, behind whatever was ready already; after ``sleep(0)`` the next slice was ready
# first, so such a task waited for a frame *and* two more slices. Asleep, the slice's own
# wake-up is a timer due after theirs, and they run first.
GIVE = 0.0001
FOLD_SLICE = 256  # events a waiting request log folds between two looks at the clock
FOLD_AT_ONCE = 2_000  # events a tab opened folds at once; more: in slices, then drawn


class Turns:
    """Long work done on the event loop, giving it a turn once :data:`SLICE` seconds of
    work have passed since the last one."""

    def __init__(self) -> None:
        self.due = time.perf_counter() + SLICE

    @classmethod
    def current(cls) -> Turns:
        """The turns of the batch being routed by this task, else new ones: a redraw that
        works in slices (the History measuring its new items) goes on with the batch's
        slice instead of starting a whole one of its own where the batch's ends."""
        batch = _batch_turns.get()
        return batch[0] if batch else cls()

    async def give(self) -> bool:
        """Yield to the loop if the slice is used up; whether it did."""
        if time.perf_counter() <= self.due:
            return False
        await asyncio.sleep(GIVE)
        self.due = time.perf_counter() + SLICE
        return True


# The turns of the batch being routed, in a list emptied when the batch ends: a task started
# meanwhile (a worker, a timer) copies the context, and must not take them up later.
_batch_turns: ContextVar[list[Turns] | None] = ContextVar("batch_turns", default=None)


async def fold_in_slices(log: LaterLog) -> None:
    """Fold what waits in ``log`` a slice at a time, giving the loop its turns: a tab
    opened after a long replay finds tens of thousands of events to fold."""
    turns = Turns()
    while log.fold(FOLD_SLICE):
        await turns.give()


def draw_shown(widget: Widget, log: LaterLog, draw: Callable[[], object],
               stale: bool) -> None:
    """A tab that folds ``log`` when it draws was just shown: draw it if it is ``stale``,
    after folding in slices (in a worker) when more than :data:`FOLD_AT_ONCE` wait."""
    if log.waiting <= FOLD_AT_ONCE:
        if stale:
            draw()
        return

    async def fold_then_draw() -> None:
        await fold_in_slices(log)
        draw()

    widget.run_worker(fold_then_draw(), group="fold", exclusive=True)


def handles(*types: type[Event]) -> Callable[[F], F]:
    """Mark a method as the handler of these event types (sync or async)."""

    def mark(method: F) -> F:
        setattr(method, _MARK, types)
        return method

    return mark


# The class of an unkeyed panel (a source's own) that the source shown does not use. A
# class, not ``display``: a ``display`` set on the widget outweighs every stylesheet rule,
# and the layout hides such a panel by class when another takes the room (-narrow-hidden).
OFF = "-off"


@dataclass(frozen=True)
class RunInfo:
    """What a panel may need to start over empty: where the run works, the limits in force,
    and whether API usage will ever come (a scripted run says so instead of "not yet")."""

    workspace: Path
    limits: Thresholds
    scripted: bool


class Routed:
    """A mixin: :meth:`route` calls the instance's handlers for one event, in class order."""

    _routes: ClassVar[dict[type[Event], tuple[str, ...]]] = {}
    # Redraws asked for during the batch being routed (None: no batch, draw at once).
    _redraws: dict[Callable[[], Any], None] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        routes: dict[type[Event], list[str]] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                for kind in getattr(member, _MARK, ()):
                    names = routes.setdefault(kind, [])
                    if name not in names:
                        names.append(name)
        cls._routes = {kind: tuple(names) for kind, names in routes.items()}

    def reset(self, run: RunInfo) -> Awaitable[None] | None:
        """A run starts (or its source went back): forget what was drawn. May be async."""
        return None

    async def route(self, event: Event) -> None:
        """One event on its own: its handlers, then the redraws they asked for."""
        await route_batch((self,), (event,))

    def redraw_once(self, redraw: Callable[[], Any]) -> None:
        """Run ``redraw`` after the batch being routed (once, however many events ask), or
        now when no batch is being routed (a direct call, a reset)."""
        if self._redraws is None:
            redraw()
        else:
            self._redraws.setdefault(redraw, None)

    def _open_batch(self) -> None:
        self._redraws = {}

    def _close_batch(self) -> list[Callable[[], Any]]:
        pending, self._redraws = self._redraws or {}, None
        return list(pending)


async def route_batch(targets: Sequence[Routed], events: Iterable[Event],
                      current: Callable[[], bool] = lambda: True) -> None:
    """Every event to every target, in order (each event reaches all targets before the
    next one is handled, as if they came one by one); then each target's redraws, once.

    Every :data:`SLICE` seconds of handlers it yields to the event loop between two events,
    so a frame can be drawn meanwhile: such a frame shows the panels after the events
    handled so far (the redraws asked for wait for the batch's end). If the run was replaced
    meanwhile (``current()`` false: a new run reset the panels), the rest of its events are
    dropped; the redraws still run, drawing the panels as they now are."""
    for target in targets:
        target._open_batch()
    turns = Turns()
    batch = [turns]
    token = _batch_turns.set(batch)  # the slice a redraw working in slices goes on with
    try:
        await _handle_all(targets, events, current, turns)
        for target in targets:
            for redraw in target._close_batch():
                result = redraw()
                if inspect.isawaitable(result):
                    await result
                await turns.give()
    finally:
        batch.clear()
        _batch_turns.reset(token)


async def _handle_all(targets: Sequence[Routed], events: Iterable[Event],
                      current: Callable[[], bool], turns: Turns) -> None:
    """:func:`route_batch`'s handlers, every event to every target, in slices."""
    # who handles each kind of event, and with what: a batch of thousands of events to a
    # dozen panels calls only the handlers (most panels take few of the kinds)
    routes: dict[type[Event], list[tuple[Routed, tuple[str, ...]]]] = {}
    try:
        for event in events:
            kind = type(event)
            takers = routes.get(kind)
            if takers is None:
                takers = routes[kind] = [(target, target._routes[kind]) for target in targets
                                         if kind in target._routes]
            for target, names in takers:
                for name in names:
                    result = getattr(target, name)(event)
                    if result is not None and inspect.isawaitable(result):
                        await result
            # (the clock read here spares a coroutine per event; give() decides)
            if time.perf_counter() > turns.due and await turns.give() and not current():
                break
    except BaseException:
        for target in targets:  # a handler failed (the app is closing): no half redraws
            target._close_batch()
        raise
