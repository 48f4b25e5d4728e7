"""The columns of a what-if comparison (a recorded session under several strategies).

Each column is written once — its key (the JSON field it shows), the command line's short
header, the report's title, and how a :class:`~core.whatif.model.StrategyRun` becomes its
cell — so every place that draws the runs (``ctxlab compare --session``, the workbench's
what-if screen, the report's What if section) prints the same number the same way, and a
test can find each JSON figure in the text. The workbench shows ``whatif.col.<key>`` in the
active language. In core, not the UI: the report is drawn without Textual or the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.pricing import money
from core.whatif.model import StrategyRun

FAILED_CELL = "-"  # a strategy that failed has no figures, not zeros


@dataclass(frozen=True)
class RunColumn:
    """One figure of a strategy's row."""

    key: str  # the JSON field it shows (StrategyRun.to_json)
    header: str  # short words, one per line, so a header never wraps
    cell: Callable[[StrategyRun], str]
    alarm: Callable[[StrategyRun], bool] = lambda _r: False  # drawn in the error colour
    title: str = ""  # the report's header: a page has room for the words in full


def results_text(run: StrategyRun) -> str:
    """``left/recoverable``: tool results that left the context, and how many of them can
    be read back byte-exact."""
    return f"{run.results_left:,}/{run.results_recoverable:,}"


def facts_text(run: StrategyRun) -> str:
    """``kept/relied on``, or ``-`` when the session relied on no earlier result."""
    if not run.facts:
        return "-"
    return f"{run.facts_kept:,}/{len(run.facts):,}"


RUN_COLUMNS: tuple[RunColumn, ...] = (
    RunColumn("billed_input_tokens", "billed\ninput", lambda r: f"{r.billed_input:,}",
              title="billed input"),
    RunColumn("cache_read_share", "cache\nread", lambda r: f"{r.cache_read_share:.0%}",
              title="cache read"),
    RunColumn("cost", "est.\ncost", lambda r: money(r.cost), title="est. cost"),
    RunColumn("peak_tokens", "peak\ntokens", lambda r: f"{r.peak_tokens:,}",
              title="peak tokens"),
    RunColumn("compactions", "compac-\ntions", lambda r: f"{r.compactions:,}",
              title="compactions"),
    RunColumn("results_left", "results\nleft/rec.", results_text,
              alarm=lambda r: r.results_recoverable < r.results_left,
              title="left / recoverable"),
    RunColumn("facts_kept", "facts\nkept", facts_text,
              alarm=lambda r: r.facts_kept < len(r.facts), title="facts kept"),
    RunColumn("rereads_after_drop", "re-reads\nafter drop",
              lambda r: f"{r.rereads_after_drop:,}", alarm=lambda r: r.rereads_after_drop > 0,
              title="re-reads after drop"),
)


def cell(column: RunColumn, run: StrategyRun) -> str:
    """``column``'s cell for ``run``; ``-`` for a strategy that failed (it has no figures,
    and zeros would read as a strategy that cost nothing)."""
    return FAILED_CELL if run.error is not None else column.cell(run)
