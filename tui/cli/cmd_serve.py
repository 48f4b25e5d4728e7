"""``ctxlab serve``: the workbench in a browser, for a classroom.

A projector and thirty laptops do not share one terminal; a browser tab does. This serves
``ctxlab demo`` through textual-serve: every browser that opens the page gets its own demo
process (and so its own temporary workspace), started with this interpreter so the page
runs the same ctxlab as the command. :mod:`tui.cli.serve_session` makes sure every one of them
ends — when its browser disconnects, and when the server is stopped — and takes its
temporary workspace with it; the page needs no internet (no web fonts). It listens on
127.0.0.1 unless ``--host`` says otherwise — the demo runs tools in its workspace, so
exposing it is a deliberate choice.

textual-serve is an optional dependency (``pip install 'ctxlab[serve]'``); without it the
command says so in one line instead of failing at import.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from tui.cli import failure

PROG = "ctxlab serve"
EXIT_USAGE = 2
DEFAULT_PORT = 8000


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from core.config import BREAK_SWITCHES
    from tui.cli.cmd_app import THEMES_HELP
    from tui.cli.flags import add_break_flag

    parser = sub.add_parser(
        "serve", help="the workbench in a browser, on localhost (teaching lab)",
        description="Serve the workbench (ctxlab demo) to web browsers with textual-serve. "
                    "Each browser tab gets its own demo in a fresh temporary workspace.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--theme", default=None, metavar="NAME", help=THEMES_HELP)
    parser.add_argument("--lang", default=None, choices=("en", "zh"), help="UI language")
    add_break_flag(parser, f"disable one protection in every served demo: "
                           f"{', '.join(BREAK_SWITCHES)}")
    parser.set_defaults(handler=run)
    return parser


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def demo_command(args: argparse.Namespace) -> str:
    """The shell command each browser session runs (textual-serve starts it via a shell).

    ``exec``: the shell becomes the demo, so the demo's parent is the server itself and a
    demo whose server is killed notices it (it watches its parent) instead of waiting on an
    idle shell.
    """
    parts = [sys.executable, "-m", "tui", "demo"]
    if args.theme:
        parts += ["--theme", args.theme]
    if args.lang:
        parts += ["--lang", args.lang]
    for name in args.breaks:
        parts += ["--break", name]
    return "exec " + shlex.join(parts)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        return fail(f"--port {args.port}: must be between 1 and 65535")
    if args.theme:
        from tui.themes import load_themes

        names = list(load_themes())
        if args.theme not in names:
            return fail(f"--theme {args.theme!r}: unknown theme; one of {', '.join(names)}")
    try:
        from tui.cli.serve_session import SessionServer
    except ImportError:
        return fail("browser mode needs textual-serve: pip install 'ctxlab[serve]'")
    server = SessionServer(demo_command(args), host=args.host, port=args.port, title="ctxlab")
    try:
        server.serve()
    except OSError as exc:  # the port is taken, or the address cannot be bound
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", 1)
    return 0
