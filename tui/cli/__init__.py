"""The ``ctxlab`` command: a thin argparse front that lazy-imports each subcommand.

Each subcommand lives in its own ``tui.cmd_*`` module exposing ``add_parser(subparsers)``
and ``run(args) -> int``, so ``ctxlab --version`` or ``ctxlab compact`` never pays for
importing Textual.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from core import __version__
from tui.cli.failure import OneLineParser, parse_or_exit

# (subcommand, module) in the order ``ctxlab --help`` lists them.
SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("demo", "tui.cli.cmd_app"),
    ("run", "tui.cli.cmd_run"),
    ("compact", "tui.cli.cmd_compact"),
    ("replay", "tui.cli.cmd_replay"),
    ("report", "tui.cli.cmd_report"),
    ("memory", "tui.cli.cmd_memory"),
    ("compare", "tui.cli.cmd_compare"),
    ("serve", "tui.cli.cmd_serve"),
    ("watch", "tui.cli.cmd_watch"),
    ("context", "tui.cli.cmd_context"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="ctxlab",
        description="Watch an LLM agent's context get budgeted, compacted and remembered.",
    )
    parser.add_argument("--version", action="version", version=f"ctxlab {__version__}")
    try:
        from tui.cli.cmd_app import add_common
    except ModuleNotFoundError:
        pass
    else:
        add_common(parser)  # plain `ctxlab --theme projector` opens the workbench themed
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    seen: set[str] = set()
    for _name, module_name in SUBCOMMANDS:
        if module_name in seen:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # not built yet
            raise
        seen.add(module_name)
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parse_or_exit(parser, argv)
    except SystemExit as exc:  # --help, or a usage error already printed: its exit code
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        try:
            from tui.cli.cmd_app import run_default
        except ModuleNotFoundError:
            parser.print_help()
            return 0
        return run_default(args)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
