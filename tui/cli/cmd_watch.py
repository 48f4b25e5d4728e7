"""``ctxlab watch``: a local Messages and OpenAI API proxy that shows any client's context.

``--headless`` prints a readable line per request, per client stage and per response;
with ``--json`` one event per line on stdout and nothing else. Without ``--headless`` the
watch screen opens. Ctrl+C stops it; the recording stays in ``.ctxlab/watch/``. The
workbench works in a temporary folder of its own, removed when it closes unless ``--keep``,
and the command says which (as ``run`` and ``replay --headless`` do): nothing is left in
``/tmp`` unannounced.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from yarl import URL

from core.events import (
    Emitter,
    Error,
    Event,
    Recorder,
    Stage,
    WatchRequest,
    WatchResponse,
    WatchStart,
    dumps_event,
)
from core.harness_paths import HarnessPathError
from core.sources.watch.apis import OPENAI_UPSTREAM
from core.sources.watch.proxy import DEFAULT_UPSTREAM
from core.sources.watch.recording import Recording
from core.sources.watch.source import WatchOptions, WatchSource
from tui.cli import failure

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
EXIT_USAGE = 2


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "watch", help="proxy a client's Messages or OpenAI API calls and watch them",
        description="Listen on 127.0.0.1 as a Messages and OpenAI API proxy: point a client "
                    "(Claude Code, Codex, an SDK) at it and every request it sends is forwarded "
                    "upstream and shown — its messages, size, cache use and what the client "
                    "compacted — in the workbench, or as lines with --headless. Exchanges are "
                    "recorded to .ctxlab/watch/ (replay them with ctxlab replay). Ctrl+C stops.")
    parser.add_argument("--port", type=int, default=8787, help="port on 127.0.0.1 (default 8787)")
    parser.add_argument("--upstream", metavar="URL", default=None,
                        help=f"where to forward every call (default: Messages calls to "
                             f"$ANTHROPIC_BASE_URL, else {DEFAULT_UPSTREAM}; OpenAI calls to "
                             f"{OPENAI_UPSTREAM})")
    parser.add_argument("--host", default=None,
                        help="bind this address instead of 127.0.0.1 (warns: others could use "
                             "your key through it)")
    parser.add_argument("--headless", action="store_true", help="no workbench: print lines")
    parser.add_argument("--json", action="store_true", help="with --headless: one event per line")
    parser.add_argument("--no-record", action="store_true",
                        help="do not append exchanges to .ctxlab/watch/")
    parser.add_argument("--keep", action="store_true",
                        help="keep the workbench's temporary folder (default: removed when it "
                             "closes; the path is printed either way)")
    parser.set_defaults(handler=run)


def fail(message: str) -> int:
    return failure.fail("ctxlab watch", message, EXIT_USAGE)


def upstream_port(upstream: str) -> tuple[str, int] | str:
    """``(host, port)`` of an upstream URL, or a one-line reason it is none.

    The URL parsers raise ``ValueError`` for a port out of range (``http://h:99999``), one
    that is no number (``http://h:abc``) or an unclosed IPv6 bracket (``[::1``); every one of
    those is a usage mistake, so it is said in one line instead of a traceback.
    """
    usage = f"--upstream must be an http(s) URL like {DEFAULT_UPSTREAM}, not {upstream!r}"
    try:
        parts = urlsplit(upstream)
        port = parts.port
        URL(upstream)  # what the proxy parses it with; it refuses some urlsplit accepts
    except ValueError as exc:
        return f"{usage} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return usage
    if port == 0:
        return f"{usage} (port 0 cannot be connected to)"
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def options_from(args: argparse.Namespace) -> WatchOptions | str:
    """The watch's options, or a one-line reason they cannot work.

    ``--upstream`` sends every request there; without it, Messages calls go to
    ``$ANTHROPIC_BASE_URL`` (else Anthropic's API) and OpenAI calls to OpenAI's API,
    decided per request by its path and credentials (:mod:`core.sources.watch.apis`)."""
    messages = args.upstream or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM
    where = upstream_port(messages)
    if isinstance(where, str):
        return where
    host = args.host or "127.0.0.1"
    if (where[0] in LOCAL_HOSTS and host in LOCAL_HOSTS and where[1] == args.port):
        return (f"the upstream {messages} is this proxy itself (is ANTHROPIC_BASE_URL already "
                f"pointing at it?); pass --upstream {DEFAULT_UPSTREAM}")
    if not 0 <= args.port <= 65535:
        return f"--port must be 0-65535, not {args.port}"
    return WatchOptions(upstream=args.upstream, messages_upstream=messages, host=host,
                        port=args.port, root=Path.cwd(), record=not args.no_record)


def _number(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def describe(event: Event) -> str | None:
    """One readable line per event (``None`` for events the log leaves out)."""
    if isinstance(event, WatchStart):
        where = f"; recording to {event.recording}" if event.recording else ""
        return (f"watching on {event.listen} → {event.upstream}{where}\n"
                f"  point a client at it: ANTHROPIC_BASE_URL={event.listen} or "
                f"OPENAI_BASE_URL={event.listen}/v1")
    if isinstance(event, WatchRequest):
        if event.conversation is None and event.purpose == "other":
            return f"#{event.id} → {event.method} {event.path} ({_number(event.body_bytes)} bytes)"
        change = f"+{event.appended} -{event.removed} ~{event.rewritten}"
        return (f"#{event.id} → {event.purpose:<6} {event.model or '?'}  {event.messages} msgs  "
                f"{_number(event.chars)} chars  ~{_number(event.est_tokens)} tok  {change}  "
                f"[{event.conversation or event.path}]")
    if isinstance(event, WatchResponse):
        usage = event.usage or {}
        cache = (f" cache w {_number(usage.get('cache_creation_input_tokens', 0))}"
                 f" r {_number(usage.get('cache_read_input_tokens', 0))}") if usage else ""
        tokens = (f"in {_number(usage.get('input_tokens'))}{cache} "
                  f"out {_number(usage.get('output_tokens'))}  ") if usage else ""
        problem = f"  ! {event.error}" if event.error else ""
        return (f"#{event.id} ← {event.status} {event.stop_reason or ''}  {tokens}"
                f"{event.duration_ms:,.0f} ms{problem}")
    if isinstance(event, Stage):
        return (f"   ✂ {event.stage} by {event.by}: {_number(event.before_chars)} → "
                f"{_number(event.after_chars)} chars, {event.before_messages} → "
                f"{event.after_messages} msgs")
    if isinstance(event, Error):
        return f"   ! {event.message}"
    return None


def _printer(as_json: bool):
    def sink(event: Event) -> None:
        if as_json:
            print(dumps_event(event), flush=True)
            return
        line = describe(event)
        if line is not None:
            print(line, flush=True)

    return sink


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM")
                     if hasattr(signal, name))


async def serve(options: WatchOptions, emit: Emitter) -> bool:
    """Watch until Ctrl+C (or a SIGTERM), which finishes the watch (its ``run_end`` says
    ok): stopping is how a watch ends, not a failure. True unless it could not start or
    failed."""
    source = WatchSource(options)
    loop = asyncio.get_running_loop()
    handled = []
    for number in STOP_SIGNALS:
        try:
            loop.add_signal_handler(number, source.finish)
            handled.append(number)
        except (NotImplementedError, RuntimeError):  # no handlers here: the signal cancels
            pass
    try:
        return await source.run(emit)
    finally:
        for number in handled:
            loop.remove_signal_handler(number)


def port_free(options: WatchOptions) -> str | None:
    """Why the watch could not listen where it is asked to, or None: asked before the
    workbench opens, so a busy port is one line and exit 2 there too, not a notice in a
    workbench that then watches nothing."""
    import socket

    try:
        with socket.create_server((options.host, options.port)):
            return None
    except OSError as exc:
        return f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"


def open_workbench(options: WatchOptions, keep: bool = False, lang: str = "en") -> int:
    """The workbench on the watch source; it hosts the watch screen (tui.screens.watch), in
    a temporary folder this command makes, and removes (unless ``keep``) and names after.
    ``lang`` is the UI's (``ctxlab --lang zh watch`` or the locale); the command line and its
    help stay English."""
    from tui.app_config import AppConfig
    from tui.cli.cmd_app import launch
    from tui.cli.temp_workspaces import forget, leave, make_temp_workspace

    if options.port and (busy := port_free(options)) is not None:
        return fail(busy)
    workspace = make_temp_workspace("ctxlab-watch-")
    if keep:
        forget(workspace)  # not even a SIGHUP removes a folder the user asked to keep
    try:
        return launch(AppConfig(scenario=None, workspace=workspace,
                                source=lambda _workspace: WatchSource(options), lang=lang),
                      None)
    finally:
        # stderr: stdout belonged to the workbench's terminal
        print(f"ctxlab watch: {leave(workspace, keep)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    options = options_from(args)
    if isinstance(options, str):
        return fail(options)
    if args.json and not args.headless:
        return fail("--json needs --headless")
    if args.keep and args.headless:
        return fail("--keep is for the workbench: --headless writes no temporary folder")
    if options.host not in LOCAL_HOSTS:
        print(f"ctxlab watch: warning: listening on {options.host}, not 127.0.0.1: anyone who "
              "can reach this port can send requests with the credentials of the clients "
              "that use it", file=sys.stderr)
    if options.record:
        try:  # a linked .ctxlab or .ctxlab/watch: one line before any proxying or UI
            Recording(options.root).check()
        except HarnessPathError as exc:
            return fail(str(exc))
    if not args.headless:
        from tui.cli.cmd_app import language_from_args

        return open_workbench(options, args.keep, language_from_args(args))
    failures = Recorder()  # the watch's own failures (not a client's) end it: say the first
    emitter = Emitter(sinks=[_printer(args.json), failures])
    try:
        ok = asyncio.run(serve(options, emitter))
    except KeyboardInterrupt:  # Ctrl+C where no handler could be installed
        ok = True
    last = failures.of(Error)[-1:]  # a failure that ends the run is its last error
    if not ok and last and last[0].kind != "cancelled":
        return fail(last[0].message)  # a planted link, a busy port: one line
    print("ctxlab watch: stopped", file=sys.stderr)
    return 0
