"""Under the context meter: what the last call was billed, the cache-hit share, the turn's cost.

Shown once a real model has reported ``usage`` (a scripted run has none, so the demo's
screens do not change): the last main call's input, cache-write, cache-read and output
tokens; the share of billed input read back from the prompt cache over the session, with a
sparkline of that share per call; and the current turn's cost in money from the price table
(:mod:`core.pricing`) — or its tokens only, for a model the table does not know.
"""

from __future__ import annotations

from textual.widgets import Static

from core.pricing import Price, load_prices, money
from core.usage import Usage
from tui.i18n import t
from tui.widgets.redraw import update_if_changed

BARS = "▁▂▃▄▅▆▇█"


def share_spark(shares: list[float], width: int = 24) -> str:
    """One bar per call (the newest ``width``), its height the call's cache-read share."""
    return "".join(BARS[min(int(s * len(BARS)), len(BARS) - 1)] for s in shares[-width:])


class CacheLine(Static):
    """Per-call usage, the session's cache-hit share and the turn's cost."""

    def __init__(self, *, id: str | None = "meter-cache") -> None:
        super().__init__(id=id)
        self.display = False
        self.price: Price | None = None
        self.last = Usage()
        self.turn = Usage()
        self.session = Usage()
        self.shares: list[float] = []

    def set_model(self, model: str | None) -> None:
        try:
            self.price = load_prices().find(model)
        except ValueError:  # an unreadable price table: tokens only, never a crash
            self.price = None

    def reset(self) -> None:
        self.last = self.turn = self.session = Usage()
        self.shares = []
        self.display = False

    def turn_start(self, *, draw: bool = True) -> None:
        self.turn = Usage()
        if draw:
            self.redraw()

    def usage(self, tokens: Usage, *, main: bool = True, draw: bool = True) -> None:
        """Count one call's tokens, as its event read them (``draw=False``: the caller
        redraws once for a burst)."""
        self.turn = self.turn + tokens
        self.session = self.session + tokens
        if main:
            self.last = tokens.billed()
            self.shares.append(tokens.cache_share)
        if not self.display:  # set once: the setter goes through the style rules each time
            self.display = True
        if draw:
            self.redraw()

    def redraw(self) -> None:
        last = self.last
        call = t("cache.call", input=last.input, write=last.cache_write, read=last.cache_read,
                 output=last.output)
        share = t("cache.share", share=self.session.cache_share,
                  spark=share_spark(self.shares))
        cost = (t("cache.turn_cost", cost=money(self.price.cost(self.turn)),
                  model=self.price.model) if self.price is not None
                else t("cache.turn_tokens", n=self.turn.billed_total))
        update_if_changed(self, f"{call}\n{share}\n{cost}")
