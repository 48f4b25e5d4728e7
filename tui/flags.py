"""Flags several commands share, each defined once: the contract's thresholds (``run``,
``compact``, ``demo``) and ``--break`` (every command that runs compaction)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from core.compact.context import BREAK_SWITCHES
from core.config import Thresholds

EXIT_USAGE = 2
BREAK_HELP = f"disable one protection (teaching lab): {', '.join(BREAK_SWITCHES)}"


class BreakSwitch(argparse.Action):
    """``--break NAME``, repeatable: a known switch is collected; an unknown one is a
    one-line usage error (exit 2), the same from every command."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        name = str(values)
        if name not in BREAK_SWITCHES:
            parser.exit(EXIT_USAGE, f"{parser.prog}: --break {name!r}: unknown switch; "
                                    f"choose from {', '.join(BREAK_SWITCHES)}\n")
        names = list(getattr(namespace, self.dest, None) or [])
        setattr(namespace, self.dest, [*names, name])


def add_break_flag(parser: argparse.ArgumentParser, help: str = BREAK_HELP,
                   default: Any = None) -> None:
    """The one ``--break`` (``default=argparse.SUPPRESS`` lets a subcommand inherit it)."""
    parser.add_argument("--break", action=BreakSwitch, dest="breaks", metavar="NAME",
                        default=[] if default is None else default, help=help)

THRESHOLD_FLAGS: tuple[tuple[str, str], ...] = (
    ("--context-limit", "context_limit"),
    ("--batch-limit", "batch_limit"),
    ("--large-result", "large_result"),
    ("--keep-recent", "keep_recent"),
    ("--max-messages", "max_messages"),
    ("--reactive-keep", "reactive_keep"),
    ("--summary-input-limit", "summary_input_limit"),
)


def add_threshold_flags(parser: argparse.ArgumentParser) -> None:
    defaults = Thresholds()
    for flag, key in THRESHOLD_FLAGS:
        parser.add_argument(flag, type=int, dest=key, default=None, metavar="N",
                            help=f"default {getattr(defaults, key)}")


def threshold_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Only the flags the user gave: each layer changes just the keys it names."""
    return {key: getattr(args, key) for _, key in THRESHOLD_FLAGS
            if getattr(args, key, None) is not None}
