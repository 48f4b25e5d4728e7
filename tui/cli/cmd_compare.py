"""``ctxlab compare``: one scenario under several context strategies, side by side.

The numbers come from :mod:`core.compare`; this module only parses flags and prints them,
as a rich table or, with ``--json``, as one object on stdout (nothing else on stdout), so a
class can put the same figures in a slide or a script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tui.cli import failure

PROG = "ctxlab compare"
EXIT_USAGE = 2
EXIT_RUN_FAILED = 1
PIPE_WIDTH = 1_000  # piped output: wide enough that no header is cut


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from core.compare import DEFAULT_STRATEGIES, STRATEGIES
    from core.scenarios import DEFAULT_SCENARIO

    parser = sub.add_parser(
        "compare", help="run one scenario under several context strategies (teaching lab)",
        description="Play a bundled scenario once per strategy, each in a fresh temporary "
                    "copy of its workspace, and compare cost, side work, losses and probes.")
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="NAME|FILE",
                        help=f"a bundled scenario or a scenario file (default {DEFAULT_SCENARIO})")
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES), metavar="LIST",
                        help=f"comma-separated, from: {', '.join(STRATEGIES)} "
                             f"(default {','.join(DEFAULT_STRATEGIES)})")
    parser.add_argument("--json", action="store_true", dest="as_json",
                        help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)
    return parser


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    from core.compare import CompareError, compare_sync, parse_strategies
    from core.scenarios import ScenarioError, find_scenario

    try:
        strategies = parse_strategies(args.strategies)
        scenario = find_scenario(args.scenario)
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
    """One row per strategy, then the probes each one could no longer answer."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from core.pricing import money

    console = Console(highlight=False)
    if not console.is_terminal:  # a pipe has no width: never cut a header or wrap a line
        console.soft_wrap = True
        if not os.environ.get("COLUMNS"):  # unless the user gave one
            console.width = PIPE_WIDTH
    table = Table(title=f"{comparison.scenario}: strategies compared", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("strategy", no_wrap=True)
    for column in ("calls", "peak\nchars", "mean\nchars", "mean\nsystem", "side\ncalls",
                   "losses", "probes\nkept", "billed\ninput", "cache\nread", "est.\ncost"):
        table.add_column(column, justify="right", no_wrap=True)
    for s in comparison.strategies:
        probes = f"{len(s.probes) - s.probes_failed}/{len(s.probes)}" if s.probes else "-"
        table.add_row(s.name if s.ok else f"{s.name} (failed)", str(s.calls),
                      f"{s.peak_chars:,}", f"{s.mean_chars:,}", f"{s.mean_system_chars:,}",
                      str(s.side_calls),
                      f"[red]{s.losses}[/]" if s.losses else "0", probes,
                      f"{s.billed_input_tokens:,}", f"{s.cache_read_share:.0%}", money(s.est_cost))
    console.print(table)
    console.print("chars: the messages sent per main call (system: the system prompt) · "
                  "side calls: summaries, memory "
                  "selections, extractions, consolidations · losses: ledger entries "
                  "\"lost\" · probes kept: answerable from what the model is sent after their turn"
                  " · billed input: estimated tokens with ctxlab's cache breakpoints, cache read:"
                  " their share served from the prompt cache, est. cost: input at the price"
                  " table's reference model (core/prices.toml)",
                  style="dim")
    for line in unanswered_lines(comparison):
        console.print(line, markup=False)


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
