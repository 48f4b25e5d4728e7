"""Each side's requests as the views follow them: the shown one, the one before, the ages.

ctxlab's own loop sends ``purpose="main"`` requests; a replay sends the recorded agent's as
``purpose="original"`` beside ctxlab's. Both carry the list they sent (``sent``), so the
largest items and the turn diff read either side the same way. Only the last two requests
of a side are held (what the diff compares); :class:`~core.views.items.Ages` remembers when
each item first appeared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.events import ModelRequest
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
