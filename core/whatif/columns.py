"""The what-if table's columns: one definition for the workbench's table and the report's.

Each column reads one figure of a :class:`~core.whatif.model.StrategyRun` (its totals are
sums over its requests) and formats it the one way both views print it, so the number a
learner reads in the workbench is, character for character, the number in the report.
Headers here are the report's (English); the workbench shows ``whatif.col.<key>`` in the
active language.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.whatif.model import StrategyRun

MISSING = "—"


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    cell: Callable[[StrategyRun], str]


def cost_cell(run: StrategyRun) -> str:
    """Dollars to the cent, or to a tenth of a cent below a dollar (a short session's
    strategies differ there); no price known: a dash, never a zero."""
    if run.cost is None:
        return MISSING
    return f"${run.cost:,.2f}" if run.cost >= 1 else f"${run.cost:.3f}"


def share_cell(run: StrategyRun) -> str:
    return f"{run.cache_read_share:.0%}"


def left_cell(run: StrategyRun) -> str:
    return f"{run.results_left:,} / {run.results_recoverable:,}"


def facts_cell(run: StrategyRun) -> str:
    return f"{run.facts_kept:,} / {len(run.facts):,}" if run.facts else MISSING


COLUMNS: tuple[Column, ...] = (
    Column("billed", "billed input", lambda r: f"{r.billed_input:,}"),
    Column("cache", "cache read", share_cell),
    Column("cost", "cost", cost_cell),
    Column("peak", "peak tokens", lambda r: f"{r.peak_tokens:,}"),
    Column("compactions", "compactions", lambda r: f"{r.compactions:,}"),
    Column("left", "left / recoverable", left_cell),
    Column("facts", "facts kept", facts_cell),
    Column("rereads", "re-reads after drop", lambda r: f"{r.rereads_after_drop:,}"),
)
