"""The columns of a strategy comparison, shared by ``ctxlab compare`` and the compare screen.

Both draw the same :class:`~core.compare.StrategyResult` rows; when each kept its own list of
columns, the workbench lost the billed-input, cache and cost columns the command line had
gained. Here each column is written once — its key (the locale id ``compare.col.<key>``), the
command line's short header, and how a result becomes its cell — so a new figure appears in
both, and the two cannot print the same number differently. No Textual import: the command
line loads this without the UI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.compare import STRATEGIES, StrategyResult
from core.pricing import money


@dataclass(frozen=True)
class Column:
    """One figure of a strategy's row."""

    key: str  # compare.col.<key> in the locales; the JSON field it shows is in ``cell``
    header: str  # the command line's header: short words, one per line, so it never wraps
    cell: Callable[[StrategyResult], str]
    alarm: Callable[[StrategyResult], bool] = lambda _r: False  # drawn in the error colour


def probes_text(result: StrategyResult) -> str:
    """``kept/asked``, or ``-`` when the scenario asks no probe."""
    if not result.probes:
        return "-"
    return f"{len(result.probes) - result.probes_failed}/{len(result.probes)}"


COLUMNS: tuple[Column, ...] = (
    Column("calls", "calls", lambda r: str(r.calls)),
    Column("peak", "peak\nchars", lambda r: f"{r.peak_chars:,}"),
    Column("mean", "mean\nchars", lambda r: f"{r.mean_chars:,}"),
    Column("system", "mean\nsystem", lambda r: f"{r.mean_system_chars:,}"),
    Column("side", "side\ncalls", lambda r: str(r.side_calls)),
    Column("losses", "losses", lambda r: str(r.losses), alarm=lambda r: r.losses > 0),
    Column("probes", "probes\nkept", probes_text, alarm=lambda r: r.probes_failed > 0),
    Column("billed", "billed\ninput", lambda r: f"{r.billed_input_tokens:,}"),
    Column("cache", "cache\nread", lambda r: f"{r.cache_read_share:.0%}"),
    Column("cost", "est.\ncost", lambda r: money(r.est_cost)),
)


def strategy_names() -> tuple[str, ...]:
    """Every strategy the engine has, in its teaching order: the rows the workbench runs."""
    return tuple(STRATEGIES)
