"""``ctxlab compare --session FILE``: a recorded session priced under several strategies.

The session is read as ``ctxlab replay`` reads it (the same formats, ``--format`` and
``--conversation``, the same one-line refusals with the counts of what was read), then
:func:`core.whatif.run.compare_session` replays its trajectory once per strategy. This module
only turns flags into :class:`~core.whatif.strategies.WhatIfOptions` and hands the
:class:`~core.whatif.model.WhatIf` to :mod:`tui.cli.whatif_table` — or, with ``--json``,
prints ``WhatIf.to_json()`` alone on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.cli import failure
from tui.cli.flags import Checked, integer
from tui.cli.whatif_table import print_whatif, printable

if TYPE_CHECKING:
    from core.whatif.strategies import WhatIfOptions

PROG = "ctxlab compare"
EXIT_USAGE = 2
EXIT_RUN_FAILED = 1



@dataclass(frozen=True)
class NumberFlag:
    """A number one of a session's strategies takes: the flag, the
    :class:`~core.whatif.strategies.WhatIfOptions` field it sets (whose default ``--help``
    shows), and the least value that makes sense (a trigger of 0 would fire on every
    request; a count kept may be 0)."""

    flag: str
    field: str
    metavar: str
    help: str
    least: int

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


NUMBER_FLAGS: tuple[NumberFlag, ...] = (
    NumberFlag("--clear-trigger", "clear_trigger_tokens", "TOKENS",
               "api-clear-tool-uses: input tokens that trigger clearing", 1),
    NumberFlag("--clear-keep", "clear_keep", "N",
               "api-clear-tool-uses: most recent tool uses never cleared", 0),
    NumberFlag("--compaction-trigger", "compaction_trigger_tokens", "TOKENS",
               "api-compaction: input tokens that trigger compaction", 1),
    NumberFlag("--mask-keep", "mask_keep", "N",
               "observation-masking: the last N turns' tool observations kept whole", 0),
)
SESSION_ONLY = (("--format", "format", "auto"), ("--conversation", "conversation", None),
                ("--facts", "facts", False),
                *((number.flag, number.dest, None) for number in NUMBER_FLAGS))


def session_strategy_names() -> tuple[str, ...]:
    """A session's strategies, in their teaching order (for ``--help``)."""
    from core.whatif.strategies import STRATEGIES

    return tuple(STRATEGIES)


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    """The flags only a recorded session takes (``--format``, ``--conversation`` as
    ``ctxlab replay`` has them, the strategies' parameters, ``--facts``)."""
    from core.whatif.strategies import WhatIfOptions
    from tui.cli.cmd_replay import FORMAT_CHOICES

    defaults = WhatIfOptions()
    group = parser.add_argument_group("a recorded session (--session)")
    group.add_argument("--format", choices=FORMAT_CHOICES, default="auto",
                       help="the file's format (default: detected)")
    group.add_argument("--conversation", default=None, metavar="ID",
                       help="which conversation of a watch recording (default: the longest)")
    for number in NUMBER_FLAGS:
        group.add_argument(number.flag, action=Checked, check=integer(), dest=number.dest,
                           default=None, metavar=number.metavar,
                           help=f"{number.help} (default {getattr(defaults, number.field)})")
    group.add_argument("--facts", action="store_true",
                       help="list every fact the session relied on, per strategy: visible "
                            "or not, with its request numbers")


def session_only_flag(args: argparse.Namespace) -> str | None:
    """The first session-only flag given without ``--session`` (it would do nothing)."""
    return next((flag for flag, dest, unset in SESSION_ONLY
                 if getattr(args, dest, unset) != unset), None)


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def options_from(args: argparse.Namespace) -> WhatIfOptions:
    """The runner's options from the flags; a number out of range or an unknown strategy
    raises :class:`~core.whatif.strategies.WhatIfError` with one line."""
    from core.whatif.strategies import (
        STRATEGIES,
        WhatIfError,
        WhatIfOptions,
        parse_strategy_names,
    )

    names = parse_strategy_names(args.strategies) if args.strategies else tuple(STRATEGIES)
    options = WhatIfOptions(strategies=names)
    for number in NUMBER_FLAGS:
        value = getattr(args, number.dest)
        if value is None:
            continue
        if value < number.least:
            raise WhatIfError(f"{number.flag}: must be "
                              f"{'positive' if number.least else '0 or more'}")
        setattr(options, number.field, value)
    options.progress = terminal_progress()
    return options


def terminal_progress() -> Callable[[str, int, int], None] | None:
    """A progress line on stderr, rewritten in place — only when stderr is a terminal: a
    pipe or a log file gets nothing but the result (and ``--json`` stays one object)."""
    if not sys.stderr.isatty():
        return None
    step = 0

    def show(strategy: str, request: int, total: int) -> None:
        nonlocal step
        step += 1
        if request in (1, total) or step % 25 == 0:
            sys.stderr.write(f"\r\x1b[K{strategy}: request {request:,} of {total:,}")
            sys.stderr.flush()
    return show


def clear_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def run_session(args: argparse.Namespace) -> int:
    """Read, compare, print; exit 2 with one line for a file or flag that cannot be used,
    1 when a strategy failed midway (its row says so)."""
    from core.sources.replay import MAX_BYTES, ReplayError, load_recording
    from core.whatif.run import compare_session
    from core.whatif.strategies import WhatIfError

    try:
        options = options_from(args)
        recording = load_recording(args.session, args.format, MAX_BYTES, args.conversation)
        whatif = compare_session(recording, options)
    except (ReplayError, WhatIfError) as exc:
        return fail(str(exc))
    finally:
        clear_progress()
    if args.as_json:
        text = json.dumps(whatif.to_json(), ensure_ascii=False)
        sys.stdout.write(printable(text) + "\n")
        sys.stdout.flush()
    else:
        print_whatif(whatif, args.facts)
    failed = [s for s in whatif.strategies if s.error is not None]
    if failed:
        return fail(f"{failed[0].name}: the run did not complete ({failed[0].error})",
                    EXIT_RUN_FAILED)
    return 0
