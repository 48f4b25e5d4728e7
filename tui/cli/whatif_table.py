"""The text of a what-if comparison: the table of strategies, then what it rests on.

A number cut to ``282…`` is worse than no number, so the table is never squeezed: the
columns that do not fit the terminal go to a second table, each row named again
(:func:`tui.cli.table_split.split_columns`). After it come the note that the trajectory is
the recorded one — without it a reader takes the figures for a simulation of the model under
each policy — the session's own measurements every figure rests on (its ratio, its fixed
overhead, whose prices), a legend, and one lesson per strategy.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui.cli.table_split import PIPE_WIDTH, split_columns

if TYPE_CHECKING:
    from core.whatif.columns import RunColumn
    from core.whatif.model import StrategyRun, WhatIf


LEGEND = ("billed input: the input tokens each request would have been billed (uncached, "
          "cache writes and cache reads), summed · cache read: their share read back from "
          "the prompt cache (a prefix byte-identical to the previous request's, within the "
          "cache's 5 minutes) · est. cost: input and output at the prices the session line "
          "names (core/prices.toml: the model's, else the table's reference model's) · "
          "peak tokens: the largest request · compactions: requests the "
          "strategy rewrote or cleared the history before · results left/rec.: tool results that "
          "left the context / of those, recoverable byte-exact · facts kept: results the "
          "session later quoted or re-read, still visible when it did (--facts lists them) "
          "· re-reads after drop: files read again after the strategy had dropped their "
          "result")


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (a recording's lone surrogates) escaped: a
    terminal prints it, and in JSON the escape reads back as the same character."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def print_whatif(whatif: WhatIf, facts: bool = False) -> None:
    """The table, the note that the trajectory is the recorded one, the session line, the
    legend, one lesson per strategy and, with ``facts``, every fact each strategy kept or
    lost."""
    from rich.console import Console

    from core.whatif.columns import RUN_COLUMNS

    console = Console(highlight=False)
    if not console.is_terminal:  # a pipe has no width: never cut a header or wrap a line
        console.soft_wrap = True
        if not os.environ.get("COLUMNS"):
            console.width = PIPE_WIDTH
    title = f"{os.path.basename(whatif.path)}: strategies compared"
    for part in split_columns(RUN_COLUMNS, console.width,
                              lambda cols: runs_table(whatif.strategies, cols)):
        console.print(runs_table(whatif.strategies, part, title))
        title = ""
    for line in (whatif.note, *session_lines(whatif)):
        console.print(printable(line), markup=False)
    console.print(LEGEND, style="dim", markup=False)
    lines = lesson_lines(whatif.strategies)
    if facts:
        lines += fact_lines(whatif.strategies)
    for line in lines:
        console.print(printable(line), markup=False)


def runs_table(runs: Sequence[StrategyRun], columns: Sequence[RunColumn],
               title: str = "") -> Any:
    """A rich table of ``columns`` after the strategy's name, one row per strategy."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from core.whatif.columns import cell

    table = Table(title=escape(printable(title)) or None, title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("strategy", no_wrap=True)
    for column in columns:
        table.add_column(column.header, justify="right", no_wrap=True)
    for run in runs:
        row = [f"[red]{cell(c, run)}[/]" if run.error is None and c.alarm(run)
               else cell(c, run) for c in columns]
        table.add_row(run.name if run.error is None else f"{run.name} (failed)", *row)
    return table


def session_lines(whatif: WhatIf) -> list[str]:
    """What the session itself measured: how much of the file was read, its model, the
    chars-per-token ratio and fixed overhead every strategy's tokens use, its window, and
    whose prices the costs are."""
    window = f"{whatif.window_tokens:,} tokens" if whatif.window_tokens else "unknown"
    prices = (f"prices of {whatif.price_model}" if whatif.price_model
              else "no price known for this model: costs shown as —")
    read = whatif.summary_line or f"{whatif.requests:,} requests"
    partial = " (partly read)" if whatif.partial else ""
    return [f"session: {whatif.path} ({whatif.format}); {read}{partial}",
            f"  model {whatif.model or 'unknown'} · {whatif.chars_per_token:.2f} chars per "
            f"token ({whatif.ratio_source}) · fixed overhead {whatif.overhead_tokens:,} "
            f"tokens per request · window {window} · {prices}"]


def lesson_lines(runs: Sequence[StrategyRun]) -> list[str]:
    """What this session teaches, one line per strategy (why a failed one stopped), then
    each strategy's notes: the limits and summaries it ran with."""
    lines = ["what this session teaches:"]
    for run in runs:
        if run.error is not None:
            lines.append(f"  {run.name}: failed ({run.error})")
        elif run.lesson:
            lines.append(f"  {run.name}: {run.lesson}")
    notes = [f"  {run.name}: {note}" for run in runs for note in run.notes]
    return [*lines, "how each strategy was set up:", *notes] if notes else lines


def fact_lines(runs: Sequence[StrategyRun]) -> list[str]:
    """Every fact the session relied on, per strategy, visible or not, with the request
    that produced it and the one that relied on it."""
    lines: list[str] = []
    for run in runs:
        lines.append(f"facts under {run.name}: {run.facts_kept:,} of {len(run.facts):,} "
                     "visible when the session relied on them")
        for check in run.facts:
            fact = check.fact
            how = (f"re-read {fact.detail}" if fact.kind == "reread"
                   else f"quoted {fact.detail!r}")
            lines.append(f"  request {fact.needed_at:,} {how}: {fact.tool} result "
                         f"{fact.result_id} from request {fact.produced_at:,} — "
                         f"{'visible' if check.visible else 'not visible'}")
    return lines
