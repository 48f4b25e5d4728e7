"""Flags several commands share, each defined once: the contract's thresholds (``run``,
``compact``, ``demo``) and ``--break`` (every command that runs compaction)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any

from core.config import BREAK_SWITCHES, MAX_SETTING, Thresholds
from tui.cli.failure import usage_error

EXIT_USAGE = 2
BREAK_HELP = f"disable one protection (teaching lab): {', '.join(BREAK_SWITCHES)}"


class BreakSwitch(argparse.Action):
    """``--break NAME``, repeatable: a known switch is collected; an unknown one is a
    one-line usage error (exit 2), the same from every command."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        name = str(values)
        if name not in BREAK_SWITCHES:
            usage_error(parser.prog, f"--break {name!r}: unknown switch; "
                                     f"choose from {', '.join(BREAK_SWITCHES)}")
        names = list(getattr(namespace, self.dest, None) or [])
        setattr(namespace, self.dest, [*names, name])


def add_break_flag(parser: argparse.ArgumentParser, help: str = BREAK_HELP,
                   default: Any = None) -> None:
    """The one ``--break`` (``default=argparse.SUPPRESS`` lets a subcommand inherit it)."""
    parser.add_argument("--break", action=BreakSwitch, dest="breaks", metavar="NAME",
                        default=[] if default is None else default, help=help)

# past it, int → float conversions overflow (a 400-digit --context-limit-tokens used to end
# in OverflowError)
MAX_COUNT = MAX_SETTING


def integer(limit: int = MAX_COUNT) -> Callable[[str], int]:
    """A whole number within ±``limit`` (:class:`Checked`'s ``check``).

    The sign is left to the command's own check, which names the setting it breaks; this
    only keeps out what no check downstream can handle — a 400-digit number, ``1e400``.
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError("not a whole number") from None
        if abs(value) > limit:
            raise ValueError(f"must be at most {limit:,}")
        return value
    return parse


def number(limit: float = 1e6) -> Callable[[str], float]:
    """A finite number within ±``limit`` (never ``nan`` or ``inf``, which every comparison
    lets through and every conversion to an int refuses)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError("not a number") from None
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if abs(value) > limit:
            raise ValueError(f"must be at most {limit:,g}")
        return value
    return parse


class Checked(argparse.Action):
    """A flag whose value goes through ``check``; a refused value is a one-line usage error
    (exit 2) naming the flag, like ``--break`` and every other check of the commands."""

    def __init__(self, option_strings: Sequence[str], dest: str,
                 check: Callable[[str], Any], **kwargs: Any) -> None:
        self.check = check
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        text = str(values)
        try:
            value = self.check(text)
        except ValueError as exc:
            shown = text if len(text) <= 24 else text[:20] + "…"
            usage_error(parser.prog, f"{option_string} {shown}: {exc}")
        setattr(namespace, self.dest, value)


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
        parser.add_argument(flag, action=Checked, check=integer(), dest=key, default=None,
                            metavar="N", help=f"default {getattr(defaults, key)}")


def threshold_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Only the flags the user gave: each layer changes just the keys it names."""
    return {key: getattr(args, key) for _, key in THRESHOLD_FLAGS
            if getattr(args, key, None) is not None}


def add_api_flags(parser: argparse.ArgumentParser) -> None:
    """The API's own context management (live mode) and prompt caching; a parameter flag
    turns its manager on by itself."""
    api = parser.add_argument_group("the API's context management (anthropic provider)")
    api.add_argument("--api-context-editing", action="store_true",
                     help="clear old tool results server-side (clear_tool_uses_20250919)")
    api.add_argument("--api-clear-trigger", action=Checked, check=integer(),
                     metavar="TOKENS",
                     help="input tokens that trigger clearing (default 100000)")
    api.add_argument("--api-clear-keep", action=Checked, check=integer(),
                     metavar="N",
                     help="most recent tool uses never cleared (default 3)")
    api.add_argument("--api-clear-at-least", action=Checked, check=integer(),
                     metavar="TOKENS",
                     help="clear nothing unless at least this many tokens go")
    api.add_argument("--api-exclude-tool", action="append", metavar="NAME",
                     help="a tool whose results are never cleared (repeatable)")
    api.add_argument("--api-compaction", action="store_true",
                     help="let the server summarise the history (compact_20260112)")
    api.add_argument("--api-compaction-trigger", action=Checked, check=integer(),
                     metavar="TOKENS",
                     help="input tokens that trigger compaction (default 150000, min 50000)")
    api.add_argument("--api-compaction-pause", action="store_true",
                     help="pause after compacting (pause_after_compaction)")
    api.add_argument("--api-compaction-instructions", metavar="TEXT",
                     help="replace the server's summarisation prompt")
    api.add_argument("--no-prompt-cache", action="store_true",
                     help="send main calls without cache_control breakpoints")


def api_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``[api]`` settings the flags name, in ``ctxlab.toml``'s shape."""
    editing = {k: v for k, v in (
        ("trigger", getattr(args, "api_clear_trigger", None)),
        ("keep", getattr(args, "api_clear_keep", None)),
        ("clear_at_least", getattr(args, "api_clear_at_least", None)),
        ("exclude_tools", getattr(args, "api_exclude_tool", None)),
    ) if v is not None}
    compaction = {k: v for k, v in (
        ("trigger", getattr(args, "api_compaction_trigger", None)),
        ("pause_after_compaction", getattr(args, "api_compaction_pause", False) or None),
        ("instructions", getattr(args, "api_compaction_instructions", None)),
    ) if v is not None}
    data: dict[str, Any] = {}
    if editing or getattr(args, "api_context_editing", False):
        data["context_editing"] = editing or True
    if compaction or getattr(args, "api_compaction", False):
        data["compaction"] = compaction or True
    if getattr(args, "no_prompt_cache", False):
        data["cache"] = False
    return data
