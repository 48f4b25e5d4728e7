"""``ctxlab report SOURCE -o report.html``: one self-contained HTML page of a run.

SOURCE is a scenario (a bundled name or a ``.yaml`` file, run on the scripted provider), a
file ``ctxlab replay`` reads (a Claude Code or Codex session, a Messages history, a saved
``ctxlab run --session`` file, a requests log or a watch recording; replayed with the offline
summarizer), or an event log written by ``ctxlab run/replay --json``. The run happens in a
temporary folder, removed at the end. The page is written atomically; an existing file is
replaced only when it is an earlier report, or with ``--force``. Exit 0 when written; 2 with
one line on stderr when the SOURCE, the output or the what-if's work folder cannot be used;
1 when the run made here failed midway or a what-if strategy did not complete (the page is
written all the same: it shows the run up to there, the strategy's error, and why).

A recorded session's page also has a "What if" section: the session under every context
strategy ``ctxlab compare --session`` knows (``--strategies`` picks some, ``--no-whatif``
leaves it out); a scenario or an event log replays no recording and gets none. A failed
strategy exits 1 as it does there, so a script sees it without reading the page.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tui.cli import failure

if TYPE_CHECKING:
    from core.report.model import Report

PROG = "ctxlab report"
EXIT_USAGE = 2
EXIT_FAILED = 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("report", help="write one self-contained HTML report of a "
                            "scenario, a session, a recording or an event log")
    parser.add_argument("source", metavar="SOURCE",
                        help="a scenario name or file, a session ctxlab replay reads, a "
                             "saved session, or a --json event log")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                        help="the HTML file to write")
    parser.add_argument("--force", action="store_true",
                        help="replace FILE even when it is not an earlier ctxlab report")
    parser.add_argument("--strategies", metavar="LIST",
                        help="a recorded session's what-if section: these strategies, "
                             "comma-separated (default: all seven)")
    parser.add_argument("--no-whatif", action="store_true",
                        help="leave the what-if section out")
    parser.set_defaults(handler=run)


def chosen_strategies(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--strategies`` as names (None: all); :class:`WhatIfError` names the known ones."""
    if args.strategies is None or args.no_whatif:
        return None
    from core.whatif.strategies import parse_strategy_names

    return parse_strategy_names(args.strategies)


class WhatIfOSError(Exception):
    """An OSError raised by the what-if (its engines archive in a work folder of their own):
    told as the what-if's, not as the output file's."""

    def __init__(self, source: str, error: OSError) -> None:
        where = f"{error.filename}: " if error.filename else ""
        super().__init__(f"the what if of {source} could not use its work folder: "
                         f"{where}{error.strerror or error}")


def failed_strategies(report: Report) -> str | None:
    """One line naming the what-if's strategies that did not complete (None: none did)."""
    runs = report.whatif.strategies if report.whatif is not None else ()
    failed = [run for run in runs if run.error is not None]
    if not failed:
        return None
    names = ", ".join(run.name for run in failed)
    return (f"what if: {names} did not complete ({failed[0].name}: {failed[0].error}; "
            "the report shows it)")


def run(args: argparse.Namespace) -> int:
    from core.report import SourceError, build, collect, render, write_report
    from core.report.output import check_target
    from core.report.whatif import compare_strategies
    from core.whatif.strategies import WhatIfError

    try:
        check_target(args.output, args.force)  # before the run: a refusal costs nothing
        strategies = chosen_strategies(args)
        report = build(collect(args.source))
        if not args.no_whatif:
            try:
                compare_strategies(report, strategies)
            except OSError as exc:
                raise WhatIfOSError(args.source, exc) from exc
        html = render(report)
        write_report(args.output, html, force=args.force)
    except (SourceError, WhatIfError, WhatIfOSError) as exc:
        return failure.fail(PROG, str(exc), EXIT_USAGE)
    except OSError as exc:
        return failure.fail(PROG, f"{args.output}: {exc.strerror or exc}", EXIT_USAGE)
    sides = ", ".join(f"{len(report.log.side(s)):,} {s} requests" for s in report.log.sides())
    whatif = (f", what if under {len(report.whatif.strategies)} strategies"
              if report.whatif is not None else "")
    print(f"wrote {args.output} ({len(html.encode()) / 1024:,.0f} kB): {sides or 'no request'}"
          f", {len(report.stages):,} stages{whatif}")
    if (failed := report.collected.failure()) is not None:
        return failure.fail(PROG, f"the run failed: {failed} (the report shows it up to there)",
                            EXIT_FAILED)
    if (strategies_failed := failed_strategies(report)) is not None:
        return failure.fail(PROG, strategies_failed, EXIT_FAILED)
    return 0
