"""Each side's requests as the Items and Diff views follow them: the shown one, the one
before, and when each item first appeared.

The requests themselves are the shared fold's (:class:`~core.views.requests.RequestLog`):
ctxlab's own ``main`` calls, and in a replay the recorded agent's (``purpose="original"``)
beside ctxlab's, each with the list it sent, its figures and its number as the events said.
This adds, per side, :class:`~core.views.items.Ages` — the request where each item's content
first appeared — fed with each list as it is sent. A watched request's turn before it is
found among the watch's events (:func:`previous_turns`), as the watch's own comparison
found it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import events as ev
from core.events import WatchRequest
from core.sources.watch.openai_requests import history
from core.views.items import Ages
from core.views.requests import RequestLog, RequestPoint


@dataclass(frozen=True)
class Side:
    """One side's last two requests, its number for the last, and its items' ages."""

    ages: Ages
    prev: RequestPoint | None
    cur: RequestPoint
    number: int


class Sides:
    """The sides seen so far, in the order they first sent a request with its list."""

    def __init__(self, *, ages: bool = True) -> None:
        self.log = RequestLog()
        self.track_ages = ages  # a view that shows no age need not digest every item
        self._ages: dict[str, Ages] = {}
        self._order: list[str] = []

    def see(self, event: ev.Event) -> str | None:
        """Fold one event; the side of a request it added with its list, else None."""
        if isinstance(event, ev.Rewind | ev.RunStart):
            self._ages, self._order = {}, []
        point = self.log.see(event)
        if not isinstance(event, ev.ModelRequest) or point is None or point.sent is None:
            return None
        if point.side not in self._order:
            self._order.append(point.side)
        ages = self._ages.setdefault(point.side, Ages())
        if self.track_ages:
            ages.observe(point.sent)
        return point.side

    @property
    def chars_per_token(self) -> float | None:
        """The session's ratio, when the source measured one (a replay)."""
        return self.log.chars_per_token or None

    def names(self) -> list[str]:
        return list(self._order)

    def get(self, name: str) -> Side | None:
        """The side's shown request (its last) and the one before, as the fold has them
        now (a replay step completes its requests' figures after they were sent)."""
        if name not in self._order:
            return None
        points = [p for p in self.log.side(name) if p.sent is not None]  # type: ignore[arg-type]
        if not points:
            return None
        return Side(ages=self._ages[name], prev=points[-2] if len(points) > 1 else None,
                    cur=points[-1], number=points[-1].index)


# -- the watch: a conversation's turns --------------------------------------------------------

# Watched requests beside a conversation's turns: its client asking for a summary (or for a
# server-side compaction), warming a cache. The watch compares a turn with the turn before,
# never with one of these (core.sources.watch.conversations).
NOT_TURNS = frozenset({"summary", "compaction", "prewarm"})
ASKS_SUMMARY = frozenset({"summary", "compaction"})


def previous_turns(requests: Mapping[int, WatchRequest], chosen: int) -> list[int]:
    """The ids of the turns of ``chosen``'s conversation before it, newest first."""
    request = requests.get(chosen)
    if request is None or request.conversation is None:
        return []
    return sorted((i for i, r in requests.items() if i < chosen
                   and r.conversation == request.conversation and r.purpose not in NOT_TURNS),
                  reverse=True)


def summary_asked(requests: Mapping[int, WatchRequest], chosen: int, before: int) -> bool:
    """Did the client ask for a summary between turn ``before`` and ``chosen``?"""
    conversation = requests[chosen].conversation
    return any(before < i < chosen and r.conversation == conversation
               and r.purpose in ASKS_SUMMARY for i, r in requests.items())


def sent_history(raw: bytes | None) -> list[Any] | None:
    """A watched request's history as the client sent it, read from its body: a Messages
    request's ``messages``, a Responses request's ``input`` items, a chat's ``messages``
    (None: no body kept, or not a JSON object)."""
    try:
        body = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    return history(body)
