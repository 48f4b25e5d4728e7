"""Under the context meter: what the last call was billed, the cache-hit share, the turn's cost.

Shown once a real model has reported ``usage`` (a scripted run has none, so the demo's
screens do not change): the last main call's input, cache-write, cache-read and output
tokens; the share of billed input read back from the prompt cache over the session, with a
sparkline of that share per call; and the current turn's cost in money from the price table
(:mod:`core.pricing`) — or its tokens only, for a model the table does not know.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from core.pricing import CallTokens, Price, cache_read_share, load_prices, money, usage_tokens
from tui.i18n import t

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
        self.last = CallTokens()
        self.turn = CallTokens()
        self.session = CallTokens()
        self.shares: list[float] = []

    def set_model(self, model: str | None) -> None:
        try:
            self.price = load_prices().find(model)
        except ValueError:  # an unreadable price table: tokens only, never a crash
            self.price = None

    def reset(self) -> None:
        self.last = self.turn = self.session = CallTokens()
        self.shares = []
        self.display = False

    def turn_start(self, *, draw: bool = True) -> None:
        self.turn = CallTokens()
        if draw:
            self.redraw()

    def usage(self, usage: dict[str, Any] | None, *, main: bool = True,
              draw: bool = True) -> None:
        """Count one call's usage (``draw=False``: the caller redraws once for a burst)."""
        if not usage:
            return
        tokens = usage_tokens(usage)
        self.turn = self.turn + tokens
        self.session = self.session + tokens
        if main:
            self.last = tokens
            self.shares.append(cache_read_share(tokens))
        self.display = True
        if draw:
            self.redraw()

    def redraw(self) -> None:
        last = self.last
        call = t("cache.call", input=last.input, write=last.cache_write, read=last.cache_read,
                 output=last.output)
        share = t("cache.share", share=cache_read_share(self.session),
                  spark=share_spark(self.shares))
        cost = (t("cache.turn_cost", cost=money(self.turn.cost(self.price)),
                  model=self.price.model) if self.price is not None
                else t("cache.turn_tokens", n=self.turn.billed_input + self.turn.output))
        self.update(f"{call}\n{share}\n{cost}")
