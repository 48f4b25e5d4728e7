"""The event stream folded into model requests, one sequence per side.

A *side* is whose requests they are:

* ``ctxlab`` — ctxlab's own loop (its ``main`` calls), and ctxlab's side of a replay;
* ``original`` — the recorded agent in a replay, as it sent its requests;
* ``watched`` — the client seen through ``ctxlab watch``.

Each :class:`RequestPoint` holds the figures its events carried — nothing is measured
again here, so a view that draws a point draws the number a ``--json`` script reads: the
messages' JSON chars (the measure the compaction trigger compares), the estimate, the
tokens the API counted when an answer said (``model_response.context_tokens``,
``replay_step.original_tokens``, ``watch_response.context_tokens``), the cache reads, the
category breakdown, and the compactions that happened since the side's previous request.

A compaction belongs to the request it was made for: ctxlab's stages and a recorded
agent's compaction arrive *before* the request they shrink, so they wait for it; a watched
client's are inferred from the request that shows them, so they arrive just after it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from core import events as ev
from core.compact.managers import Manager
from core.usage import Usage

Side = Literal["ctxlab", "original", "watched"]
SIDES: tuple[Side, ...] = ("ctxlab", "original", "watched")


@dataclass(frozen=True)
class RequestPoint:
    """One model request of one side, with the figures its events carried."""

    side: Side
    index: int  # 1-based: the main call's number, the replay step's, the watched request's id
    chars: int  # the messages' JSON chars
    est_tokens: int  # the source's estimate (messages, and the system prompt where it had it)
    messages: int
    tokens: int | None = None  # the API's count of the context it read, when an answer said
    cache_read: int | None = None  # of those, read back from the prompt cache
    usage: dict[str, Any] | None = None  # the answer's usage as the event carried it
    breakdown: dict[str, Any] = field(default_factory=dict)  # chars by category
    stages: tuple[ev.Stage, ...] = ()  # what compacted this side since its previous request
    timestamp: str | None = None
    conversation: str | None = None  # a watched request's conversation
    model: str | None = None
    # the messages as sent, when the source kept them (never written to the wire)
    sent: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def context_tokens(self) -> int:
        """The tokens this request filled: the API's count where known, else the estimate."""
        return self.tokens if self.tokens is not None else self.est_tokens

    @property
    def counted(self) -> bool:
        """Whether :attr:`context_tokens` is the API's count rather than an estimate."""
        return self.tokens is not None

    @property
    def compacted(self) -> bool:
        return bool(self.stages)


def side_of(stage: ev.Stage, watching: bool) -> Side:
    """Whose compaction a stage is: a watched client's, a recorded agent's, or ctxlab's."""
    if watching or stage.by == Manager.CLIENT:
        return "watched"
    try:
        recorded = Manager(stage.by).recorded
    except ValueError:
        recorded = False
    return "original" if recorded else "ctxlab"


def changed(point: RequestPoint, **changes: Any) -> RequestPoint:
    """``dataclasses.replace`` for a point, without running ``__init__`` again: the fold
    replaces a request's point when its answer comes and again when its replay step does,
    for thousands of requests on every routing of a fast replay, and the point has no
    checks or derived fields that ``__init__`` would redo. The point given is left as it
    was."""
    new = object.__new__(RequestPoint)
    fields = new.__dict__
    fields.update(point.__dict__)
    for name, value in changes.items():
        if name not in fields:
            raise TypeError(f"RequestPoint has no field {name!r}")
        fields[name] = value
    return new


def _cache_read(usage: dict[str, Any] | None) -> int | None:
    read = Usage.from_api(usage)
    return None if read is None else read.cache_read


class RequestLog:
    """The fold: :meth:`see` every event in order; read :meth:`side` at any moment.

    A ``rewind`` (a source going back) starts the log over, as it does every panel."""

    def __init__(self) -> None:
        self.context_limit_tokens: int | None = None  # a replay's window, as it said
        self.chars_per_token: float | None = None  # a replay's measured ratio
        self.overhead_tokens: int | None = None  # …and the fit's intercept (replay_start)
        self.context_limit: int | None = None  # a replay's char limit for ctxlab's side
        self.limits: str | None = None  # how ctxlab's side of a replay got its limits
        self.model: str | None = None  # the model run_start named
        self._watching = False
        self._clear()

    def _clear(self) -> None:
        self.points: dict[Side, list[RequestPoint]] = {side: [] for side in SIDES}
        self.pending: dict[Side, list[ev.Stage]] = {side: [] for side in SIDES}
        # Kept as the events come, so a view asks in constant time however long the session:
        # the lowest context an automatic compaction of each side reported, and the most
        # tokens any request of each side was counted at.
        self.lowest_auto: dict[Side, int | None] = {side: None for side in SIDES}
        self.most_tokens: dict[Side, int] = {side: 0 for side in SIDES}
        self._at: dict[Side, dict[int, int]] = {side: {} for side in SIDES}  # index -> place

    def side(self, side: Side) -> list[RequestPoint]:
        return self.points[side]

    def sides(self) -> list[Side]:
        """The sides that have requests, in :data:`SIDES` order."""
        return [side for side in SIDES if self.points[side]]

    def find(self, side: Side, index: int) -> RequestPoint | None:
        """The request numbered ``index`` of ``side`` (its own numbering, not a position)."""
        at = self._at[side].get(index)
        return None if at is None else self.points[side][at]

    def see(self, event: ev.Event) -> RequestPoint | None:
        """Fold one event; the point it added or completed, if any."""
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler is not None else None

    # -- the events ---------------------------------------------------------------------------

    def _rewind(self, _: ev.Rewind) -> None:
        """The source plays its stream again from the start (what it said it is stays)."""
        self._clear()

    def _run_start(self, event: ev.RunStart) -> None:
        self.__init__()  # type: ignore[misc]
        self.model = event.model

    def _replay_start(self, event: ev.ReplayStart) -> None:
        self.context_limit_tokens = event.context_limit_tokens
        self.chars_per_token = event.chars_per_token
        self.overhead_tokens = event.overhead_tokens
        self.context_limit = event.context_limit
        self.limits = event.limits

    def _watch_start(self, _: ev.WatchStart) -> None:
        self._watching = True

    def _add(self, side: Side, point: RequestPoint) -> RequestPoint:
        stages, self.pending[side] = tuple(self.pending[side]), []
        if stages:
            point = changed(point, stages=stages)
        self._at[side][point.index] = len(self.points[side])
        self.points[side].append(point)
        return point

    def _update(self, side: Side, at: int, **changes: Any) -> RequestPoint:
        old = self.points[side][at]
        point = changed(old, **changes)
        if point.index != old.index:
            self._at[side].pop(old.index, None)
            self._at[side][point.index] = at % len(self.points[side])
        if point.tokens is not None:
            self.most_tokens[side] = max(self.most_tokens[side], point.tokens)
        self.points[side][at] = point
        return point

    def _model_request(self, event: ev.ModelRequest) -> RequestPoint | None:
        if event.purpose not in ("main", "original"):
            return None
        side: Side = "original" if event.purpose == "original" else "ctxlab"
        return self._add(side, RequestPoint(
            side=side, index=len(self.points[side]) + 1, chars=event.chars,
            est_tokens=event.est_tokens, messages=event.messages,
            breakdown=dict(event.breakdown), sent=event.sent))

    def _model_response(self, event: ev.ModelResponse) -> RequestPoint | None:
        if event.purpose not in ("main", "original"):
            return None
        side: Side = "original" if event.purpose == "original" else "ctxlab"
        if not self.points[side]:
            return None
        return self._update(side, -1, tokens=event.context_tokens, usage=event.usage,
                            cache_read=_cache_read(event.usage))

    def _replay_step(self, event: ev.ReplayStep) -> RequestPoint | None:
        """The original's request in full: its recorded tokens and its breakdown (the
        ``original`` model_request before it has neither)."""
        if not self.points["original"]:
            return None
        point = self.points["original"][-1]
        tokens = event.original_tokens if event.original_tokens is not None else point.tokens
        if self.points["ctxlab"]:  # ctxlab's request for the same step came just before
            self._update("ctxlab", -1, index=event.index, timestamp=event.timestamp)
        return self._update("original", -1, index=event.index, tokens=tokens,
                            breakdown=dict(event.breakdown), timestamp=event.timestamp)

    def _stage(self, event: ev.Stage) -> RequestPoint | None:
        side = side_of(event, self._watching)
        if event.trigger == "auto" and event.pre_tokens:
            lowest = self.lowest_auto[side]
            self.lowest_auto[side] = event.pre_tokens if lowest is None else \
                min(lowest, event.pre_tokens)
        if side == "watched" and self.points[side]:  # inferred from the request just seen
            last = self.points[side][-1]
            return self._update(side, -1, stages=(*last.stages, event))
        self.pending[side].append(event)
        return None

    def _watch_request(self, event: ev.WatchRequest) -> RequestPoint | None:
        if event.conversation is None:  # not a model call (a count, a probe, a model list)
            return None
        return self._add("watched", RequestPoint(
            side="watched", index=event.id, chars=event.chars, est_tokens=event.est_tokens,
            messages=event.messages, breakdown=dict(event.breakdown), timestamp=event.time,
            conversation=event.conversation, model=event.model))

    def _watch_response(self, event: ev.WatchResponse) -> RequestPoint | None:
        at = self._at["watched"].get(event.id)
        if at is None:
            return None
        return self._update("watched", at, tokens=event.context_tokens, usage=event.usage,
                            cache_read=_cache_read(event.usage))


_HANDLERS: dict[type, Any] = {
    ev.Rewind: RequestLog._rewind,
    ev.RunStart: RequestLog._run_start,
    ev.ReplayStart: RequestLog._replay_start,
    ev.WatchStart: RequestLog._watch_start,
    ev.ModelRequest: RequestLog._model_request,
    ev.ModelResponse: RequestLog._model_response,
    ev.ReplayStep: RequestLog._replay_step,
    ev.Stage: RequestLog._stage,
    ev.WatchRequest: RequestLog._watch_request,
    ev.WatchResponse: RequestLog._watch_response,
}


def fold(events: Any) -> RequestLog:
    """A log of a whole stream (a ``--json`` file read back, a finished run)."""
    log = RequestLog()
    for event in events:
        log.see(event)
    return log


class LaterLog:
    """A :class:`RequestLog` folded when it is read. A view that is not shown hands it
    every event and reads it only to draw: a long replay at full speed then costs it an
    append per event, and the fold runs, in order, when the view is next drawn or asked
    (or a slice at a time: :meth:`fold`)."""

    def __init__(self) -> None:
        self._log = RequestLog()
        self._waiting: deque[ev.Event] = deque()

    def add(self, event: ev.Event) -> None:
        if type(event) not in _HANDLERS:
            return
        if isinstance(event, ev.RunStart):  # it starts the log over: what came is moot
            self._waiting.clear()
        elif isinstance(event, ev.Rewind):  # only what a source said it is outlives it
            self._waiting = deque(e for e in self._waiting if isinstance(e, _OUTLIVE_REWIND))
        self._waiting.append(event)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def fold(self, count: int) -> bool:
        """Fold up to ``count`` of the events waiting; whether any still wait."""
        waiting, see = self._waiting, self._log.see
        for _ in range(min(count, len(waiting))):
            see(waiting.popleft())
        return bool(waiting)

    @property
    def log(self) -> RequestLog:
        """The log with every event added so far folded in."""
        self.fold(len(self._waiting))
        return self._log


# What a rewind keeps (what the source is, said once at its start); it clears the rest.
_OUTLIVE_REWIND = (ev.RunStart, ev.ReplayStart, ev.WatchStart)
