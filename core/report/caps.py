"""How much of each item a report quotes: a preview with its size, never megabytes.

A report is attached to an issue and opened in a browser; a session's tool results can be
hundreds of kB each. Each item is quoted up to :data:`ITEM_CHARS`, and the whole report
quotes at most :data:`TOTAL_CHARS` (message text and ledger rows alike) — past that an item
is named with its size only. Every cut says so, with how much was left out and where the
whole text is.
"""

from __future__ import annotations

from dataclasses import dataclass

ITEM_CHARS = 2_000
TOTAL_CHARS = 1_500_000


@dataclass(frozen=True)
class Quote:
    """What a report shows of one text: ``shown`` and how many chars were left out."""

    shown: str
    total: int  # the whole text's chars
    cut: int  # chars not shown

    @property
    def whole(self) -> bool:
        return self.cut == 0


class Budget:
    """The report's quoting allowance, spent item by item in the order they are shown."""

    def __init__(self, item: int = ITEM_CHARS, total: int = TOTAL_CHARS) -> None:
        self.item = item
        self.left = total

    def quote(self, text: str) -> Quote:
        """The start of ``text`` this report can still afford (nothing once spent)."""
        take = max(0, min(len(text), self.item, self.left))
        self.left -= take
        return Quote(shown=text[:take], total=len(text), cut=len(text) - take)

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def spend(self, chars: int) -> bool:
        """Take ``chars`` for something shown whole (a ledger row); False once spent."""
        if self.left < chars:
            self.left = 0
            return False
        self.left -= chars
        return True
