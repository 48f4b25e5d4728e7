"""The fullness timeline's data: how full each side's context was at every request.

What the plot draws, per side (:data:`~core.views.requests.SIDES`), built from the fold of
:mod:`core.views.requests` and nothing else, so a point is the number the events carried:

* ``y`` — the request's context tokens (:func:`core.views.window.request_tokens`, the
  figure the window view shows): the recorded tokens of a replay's original
  (``replay_step.original_tokens``), the API's count when a real model answered
  (``model_response.context_tokens``, ``watch_response``), the source's estimate
  otherwise (ctxlab's side of a replay is its chars over the session's measured ratio plus
  the overhead the transcript does not record, so both sides share one unit);
* ``cache_read`` — of those tokens, the ones read back from the prompt cache, where an
  answer said (a shaded band under the line);
* ``marks`` — every compaction of the side, on the request it was made for, with its
  stage, its manager and its before → after (tokens where the agent reported them, else
  chars, as the stage event stated them);
* ``threshold`` — where the side compacts, in tokens, as the window view marks it
  (:func:`core.views.window.trigger`): ctxlab's trigger compares the messages' chars with
  its context limit, so its line sits at the tokens a request has when its messages reach
  that limit (what is sent with every call, plus the limit over the chars-per-token
  ratio); the recorded agent's is its own auto-compaction as its boundary records state it.

The terminal panel and the HTML report both draw this one structure.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import events as ev
from core.config import Thresholds
from core.views.requests import SIDES, RequestLog, RequestPoint, Side
from core.views.window import request_tokens, trigger


@dataclass(frozen=True)
class Mark:
    """One compaction, on the request it was made for."""

    side: Side
    index: int  # the request it shrank (its side's own numbering)
    stage: str
    by: str
    trigger: str | None
    before_chars: int
    after_chars: int
    before_tokens: int | None  # as the agent reported them (``pre_tokens``), if it did
    after_tokens: int | None

    @property
    def in_tokens(self) -> bool:
        """Whether the agent reported before and after in tokens (else: chars, measured)."""
        return self.before_tokens is not None and self.after_tokens is not None


@dataclass(frozen=True)
class Series:
    """One side's requests: x the request numbers, y their context tokens."""

    side: Side
    x: tuple[int, ...]
    y: tuple[int, ...]
    counted: tuple[bool, ...]  # y is the API's count (else the source's estimate)
    cache_read: tuple[int | None, ...]
    marks: tuple[Mark, ...]
    threshold: int | None  # tokens; None where it is not known

    def at(self, index: int) -> int | None:
        """The position of request ``index`` in this series (None: the side has none)."""
        try:
            return self.x.index(index)
        except ValueError:
            return None

    @property
    def has_cache(self) -> bool:
        return any(read for read in self.cache_read)


@dataclass(frozen=True)
class Timeline:
    """Every side that has requests, in :data:`SIDES` order."""

    series: tuple[Series, ...]

    def side(self, side: Side) -> Series | None:
        return next((s for s in self.series if s.side == side), None)

    @property
    def requests(self) -> tuple[int, ...]:
        """Every request number any side has, in order (the cursor's stops)."""
        return tuple(sorted({x for s in self.series for x in s.x}))

    @property
    def marks(self) -> tuple[Mark, ...]:
        return tuple(m for s in self.series for m in s.marks)

    @property
    def top(self) -> int:
        """The largest figure drawn (a point or a threshold): the plot's scale."""
        values = [v for s in self.series for v in s.y]
        values += [s.threshold for s in self.series if s.threshold is not None]
        return max(values, default=0)


def marks_of(point: RequestPoint) -> tuple[Mark, ...]:
    return tuple(_mark(point.side, point.index, stage) for stage in point.stages)


def _mark(side: Side, index: int, stage: ev.Stage) -> Mark:
    return Mark(side=side, index=index, stage=stage.stage, by=stage.by, trigger=stage.trigger,
                before_chars=stage.before_chars, after_chars=stage.after_chars,
                before_tokens=stage.pre_tokens, after_tokens=stage.post_tokens)


def series_of(log: RequestLog, side: Side, threshold: int | None = None,
              conversation: str | None = None) -> Series:
    points = [p for p in log.side(side) if conversation is None or p.conversation ==
              conversation]
    return Series(side=side, x=tuple(p.index for p in points),
                  y=tuple(request_tokens(log, p) for p in points),
                  counted=tuple(p.counted for p in points),
                  cache_read=tuple(p.cache_read for p in points),
                  marks=tuple(m for p in points for m in marks_of(p)), threshold=threshold)


def build(log: RequestLog, limits: Thresholds | None = None,
          conversation: str | None = None) -> Timeline:
    """The timeline of everything ``log`` has folded so far; ``limits``: ctxlab's
    thresholds in force (without them a replay's are read from ``replay_start``);
    ``conversation``: a watch's requests of that conversation only (a client's main turns,
    its subagents and its side calls are conversations of their own: one line for them all
    would zigzag between their sizes)."""
    def threshold(side: Side) -> int | None:
        mark = trigger(log, side, limits)
        return None if mark is None else mark.tokens

    return Timeline(tuple(series_of(log, side, threshold(side), conversation)
                          for side in SIDES if log.side(side)))
