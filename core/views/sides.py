"""Each side's requests as the views follow them: the shown one, the one before, the ages.

ctxlab's own loop sends ``purpose="main"`` requests; a replay sends the recorded agent's as
``purpose="original"`` beside ctxlab's. Both carry the list they sent (``sent``), so the
largest items and the turn diff read either side the same way. Only the last two requests
of a side are held (what the diff compares); :class:`~core.views.items.Ages` remembers when
each item first appeared. A watched request's turn before it is found among the watch's
events (:func:`previous_turns`), as the watch's own comparison found it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.events import ModelRequest, WatchRequest
from core.views.items import Ages

SIDE_OF = {"main": "ctxlab", "original": "original"}  # a request's purpose → its side


@dataclass
class Side:
    """One side's last two requests (``number``: how many it has sent)."""

    ages: Ages = field(default_factory=Ages)
    prev: ModelRequest | None = None
    cur: ModelRequest | None = None
    number: int = 0


class Sides:
    """The sides seen so far, in the order they first sent a request."""

    def __init__(self, *, ages: bool = True) -> None:
        self.sides: dict[str, Side] = {}
        self.track_ages = ages  # a view that shows no age need not digest every item

    def see(self, event: ModelRequest) -> str | None:
        """Follow one request; its side's name, or None for a call no side makes (a
        summary's call, a request without its list)."""
        name = SIDE_OF.get(event.purpose)
        if name is None or event.sent is None:
            return None
        side = self.sides.setdefault(name, Side())
        side.prev, side.cur = side.cur, event
        side.number = side.ages.observe(event.sent) if self.track_ages else side.number + 1
        return name

    def names(self) -> list[str]:
        return list(self.sides)

    def get(self, name: str) -> Side | None:
        return self.sides.get(name)


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
