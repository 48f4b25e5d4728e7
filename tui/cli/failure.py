"""How every command says it failed: one line on stderr, ``ctxlab CMD: message``.

Messages quote names from outside (a planted link's target, a session's ids), which can hold
a newline or a lone surrogate; both are escaped so the line stays one and prints on any
terminal.

argparse's own mistakes — a value of the wrong type, an unknown flag, a missing argument —
printed the whole usage block (a dozen lines for ``replay``) before the one line that
mattered; :class:`OneLineParser` says them the same way as every other failure, with where
to look next (``try 'ctxlab replay --help'``), and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_USAGE = 2


def one_line(text: str) -> str:
    """``text`` with CR and LF spelt ``\\r``/``\\n`` and what UTF-8 cannot encode escaped."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    return flat.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(prog: str, message: str, code: int) -> int:
    """Print ``prog: message`` as one line on stderr; the exit code, for ``return``."""
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    return code


def usage_error(prog: str, message: str) -> NoReturn:
    """A usage mistake: one line naming the command and its ``--help``, then exit 2."""
    fail(prog, f"{message.removeprefix('argument ')} (try '{prog} --help')", EXIT_USAGE)
    raise SystemExit(EXIT_USAGE)


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (its subcommands' parsers are of the same
    class: argparse makes them with the parent's class)."""

    def error(self, message: str) -> NoReturn:
        usage_error(self.prog, message)


def parse_or_exit(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, except that arguments nobody recognised are blamed on the
    subcommand they were given to (``ctxlab compare: unrecognized arguments: --bogus``), not
    on ``ctxlab`` as argparse does."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = getattr(args, "command", None)
        prog = f"{parser.prog} {command}" if command else parser.prog
        usage_error(prog, f"unrecognized arguments: {' '.join(extra)}")
    return args
