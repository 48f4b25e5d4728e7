"""``ctxlab compare``: one scenario under several context strategies, side by side.

The numbers come from :mod:`core.compare`; this module only parses flags and prints them,
as a rich table or, with ``--json``, as one object on stdout (nothing else on stdout), so a
class can put the same figures in a slide or a script. ``--session FILE`` asks the same
question of a recorded session instead of a scenario (:mod:`tui.cli.compare_session`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.cli import failure
from tui.cli.table_split import PIPE_WIDTH, split_columns

if TYPE_CHECKING:
    from tui.compare_columns import Column


PROG = "ctxlab compare"
EXIT_USAGE = 2
EXIT_RUN_FAILED = 1


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from core.compare import DEFAULT_STRATEGIES, STRATEGIES
    from core.scenarios import DEFAULT_SCENARIO
    from tui.cli.compare_session import add_session_flags, session_strategy_names

    parser = sub.add_parser(
        "compare", help="compare context strategies on a scenario or a recorded session",
        description="Play a bundled scenario once per strategy, each in a fresh temporary "
                    "copy of its workspace, and compare cost, side work, losses and probes; "
                    "or, with --session, price a recorded session's own trajectory under "
                    "each strategy (what would have been sent, cached, dropped and kept).")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", default=None, metavar="NAME|FILE",
                        help=f"a bundled scenario or a scenario file (default {DEFAULT_SCENARIO})")
    source.add_argument("--session", type=Path, default=None, metavar="FILE",
                        help="a recorded session, in any format replay reads (a watch "
                             "recording included)")
    parser.add_argument("--strategies", default=None, metavar="LIST",
                        help=f"comma-separated; a scenario's from: {', '.join(STRATEGIES)} "
                             f"(default {','.join(DEFAULT_STRATEGIES)}); a session's from: "
                             f"{', '.join(session_strategy_names())} (default: all)")
    parser.add_argument("--json", action="store_true", dest="as_json",
                        help="print one JSON object instead of a table")
    add_session_flags(parser)
    parser.set_defaults(handler=run)
    return parser


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    from core.compare import DEFAULT_STRATEGIES, CompareError, compare_sync, parse_strategies
    from core.scenarios import DEFAULT_SCENARIO, ScenarioError, find_scenario
    from tui.cli.compare_session import run_session, session_only_flag

    if args.session is not None:
        return run_session(args)
    if (flag := session_only_flag(args)) is not None:
        return fail(f"{flag} is for --session FILE (a recorded session)")
    try:
        strategies = parse_strategies(args.strategies or ",".join(DEFAULT_STRATEGIES))
        scenario = find_scenario(args.scenario or DEFAULT_SCENARIO)
    except (CompareError, ScenarioError) as exc:
        return fail(str(exc))
    comparison = compare_sync(scenario, strategies)
    if args.as_json:
        sys.stdout.write(json.dumps(comparison.to_json(), ensure_ascii=False) + "\n")
        sys.stdout.flush()
    else:
        print_table(comparison)
    failed = [s for s in comparison.strategies if not s.ok]
    if failed:
        return fail(f"{failed[0].name}: the run did not complete ({failed[0].error})",
                    EXIT_RUN_FAILED)
    return 0


def print_table(comparison: Any) -> None:
    """One row per strategy, then the probes each one could no longer answer.

    A number cut to ``282…`` is worse than no number, so the columns are never squeezed:
    those that do not fit the terminal's width go to a second table (and a third…), each
    starting again with the strategy's name."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:  # a pipe has no width: never cut a header or wrap a line
        console.soft_wrap = True
        if not os.environ.get("COLUMNS"):  # unless the user gave one
            console.width = PIPE_WIDTH
    title = f"{comparison.scenario}: strategies compared"
    for part in column_groups(comparison, console.width):
        console.print(table_of(comparison, part, title))
        title = ""
    console.print(LEGEND, style="dim")
    for line in [*note_lines(comparison), *unanswered_lines(comparison)]:
        console.print(line, markup=False)


LEGEND = ("chars: the messages sent per main call (system: the system prompt) · side calls: "
          "summaries, memory selections, extractions, consolidations · losses: ledger entries "
          "\"lost\" · probes kept: answerable from what the model is sent after their turn"
          " · billed input: estimated tokens with ctxlab's cache breakpoints, cache read:"
          " their share served from the prompt cache, est. cost: input at the price"
          " table's reference model (core/prices.toml)")


def table_of(comparison: Any, columns: Sequence[Column], title: str = "") -> Any:
    """A rich table of ``columns``, after the strategy's name, one row per strategy."""
    from rich import box
    from rich.table import Table

    table = Table(title=title or None, title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    table.add_column("strategy", no_wrap=True)
    for column in columns:
        table.add_column(column.header, justify="right", no_wrap=True)
    for s in comparison.strategies:
        cells = [f"[red]{c.cell(s)}[/]" if c.alarm(s) else c.cell(s) for c in columns]
        table.add_row(s.name if s.ok else f"{s.name} (failed)", *cells)
    return table


def column_groups(comparison: Any, width: int) -> list[list[Column]]:
    """The columns in order, split into runs whose table fits ``width``."""
    from tui.compare_columns import COLUMNS

    return split_columns(COLUMNS, width, lambda part: table_of(comparison, part))


def note_lines(comparison: Any) -> list[str]:
    """Why a strategy did side work its description does not promise (a summary by a
    manager that writes none): the run's own notes, one line each."""
    return [f"  {s.name}: {note}" for s in comparison.strategies for note in s.notes]


def unanswered_lines(comparison: Any) -> list[str]:
    """One line per strategy and unanswerable probe, with the turns it failed after —
    a probe checked after every turn is one line, not one per turn."""
    lines = []
    for s in comparison.strategies:
        turns: dict[tuple[str, str], list[int]] = {}
        for p in s.probes:
            if not p.answerable:
                turns.setdefault((p.ask, p.expect), []).append(p.turn)
        for (ask, expect), numbers in turns.items():
            label = "turn" if len(numbers) == 1 else "turns"
            lines.append(f"  {s.name}, {label} {turn_ranges(numbers)}: cannot answer {ask!r} "
                         f"(expected {expect!r})")
    return lines


def turn_ranges(numbers: list[int]) -> str:
    """``[2, 3, 4, 7]`` → ``"2–4, 7"``."""
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)
