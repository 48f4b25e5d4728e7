"""The what-if table's columns: one definition for the workbench's table and the report's.

Each column reads one figure of a :class:`~core.whatif.model.StrategyRun` (its totals are
sums over its requests) and formats it the one way every view prints it (the command
line's table writes the same cells), so the number a learner reads in the workbench is,
character for character, the number in the report. Headers here are the report's
(English); the workbench shows ``whatif.col.<key>`` in the active language.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.pricing import money
from core.whatif.model import StrategyRun

FAILED_CELL = "-"  # a strategy that failed has no figures, not zeros


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    figure: Callable[[StrategyRun], str]

    def cell(self, run: StrategyRun) -> str:
        """The figure, or ``-`` for a strategy that failed (zeros would read as a strategy
        that cost nothing)."""
        return FAILED_CELL if run.error is not None else self.figure(run)


def left_cell(run: StrategyRun) -> str:
    """Tool results that left the context / of those, readable back byte-exact."""
    return f"{run.results_left:,}/{run.results_recoverable:,}"


def facts_cell(run: StrategyRun) -> str:
    """Facts still visible / relied on; ``-`` when the session relied on none."""
    return f"{run.facts_kept:,}/{len(run.facts):,}" if run.facts else "-"


COLUMNS: tuple[Column, ...] = (
    Column("billed", "billed input", lambda r: f"{r.billed_input:,}"),
    Column("cache", "cache read", lambda r: f"{r.cache_read_share:.0%}"),
    Column("cost", "cost", lambda r: money(r.cost)),
    Column("peak", "peak tokens", lambda r: f"{r.peak_tokens:,}"),
    Column("compactions", "compactions", lambda r: f"{r.compactions:,}"),
    Column("left", "left / recoverable", left_cell),
    Column("facts", "facts kept", facts_cell),
    Column("rereads", "re-reads after drop", lambda r: f"{r.rereads_after_drop:,}"),
)
