"""``ctxlab context SOURCE``: one request's context window, by category, as a table or JSON.

SOURCE is what ``ctxlab report`` takes, read the same way (:mod:`core.views.collect`): a
bundled scenario or scenario file (run headless, offline, in a temporary workspace removed
at the end), a ``--json`` event log, or anything ``ctxlab replay`` reads — a Claude Code or
Codex session, a Messages history (a session ``ctxlab run --session`` saved is one), a
request log, a ``ctxlab watch`` recording — replayed headless into a temporary folder. The
events are folded (:mod:`core.views.requests`) and the request shown is
:func:`core.views.window.window_of`'s, the one the workbench's window view draws, so the
two state the same numbers. ``--json`` prints each side's :class:`~core.views.window.Window`
as one JSON object per line (docs/CONTEXT.md). A file that cannot be read, a name that is
neither a file nor a scenario, a request that does not exist: one line, exit 2.
"""

from __future__ import annotations

import argparse
import json

from core.config import ConfigError
from core.views.requests import SIDES, RequestLog, Side, fold
from core.views.window import Window, ordered, window_of
from tui.cli import failure
from tui.i18n import t

PROG = "ctxlab context"
EXIT_USAGE = 2
EXIT_FAILED = 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("context", help="one request's context window, by category "
                            "(a scenario, a saved session, a replayable file)")
    parser.add_argument("source", metavar="SOURCE",
                        help="a bundled scenario, or a file ctxlab replay reads")
    parser.add_argument("--at", type=int, default=None, metavar="N",
                        help="request N (default: the last)")
    parser.add_argument("--side", choices=SIDES, default=None,
                        help="one side only (default: every side the source has)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per side (docs/CONTEXT.md)")
    parser.set_defaults(handler=run)


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    from core.views.collect import SourceError, collect

    if args.at is not None and args.at < 1:
        return fail("--at: must be 1 or more")
    try:
        collected = collect(args.source)
    except (SourceError, ConfigError, OSError) as exc:
        return fail(str(exc))
    if (reason := collected.failure()) is not None:
        return fail(reason, EXIT_FAILED)
    log = fold(collected.events)
    sides = [args.side] if args.side else ordered(log.sides())
    windows = [w for side in sides
               if (w := window_of(log, side, args.at, limits=collected.thresholds))]
    if not windows:
        return fail(_missing(log, sides, args.at))
    if args.json:
        for window in windows:
            print(json.dumps(window.to_json(), ensure_ascii=False))
    else:
        print("\n\n".join(table(w) for w in windows))
    return 0


def _missing(log: RequestLog, sides: list[Side], at: int | None) -> str:
    shown = [side for side in sides if log.side(side)]
    if not shown:
        named = f" of side {', '.join(sides)}" if sides else ""
        return f"no model request{named} in this source"
    numbers = [p.index for p in log.side(shown[0])]
    return f"no request {at} (requests {numbers[0]}–{numbers[-1]})"


# -- the table ----------------------------------------------------------------------------


def _pct(tokens: int, window: int) -> str:
    return f"{tokens / window * 100:5.1f}%" if window else "    —"


def _row(label: str, tokens: int, window: int, chars: int | None) -> str:
    shown = "—" if chars is None else f"{chars:,}"
    return f"  {label:<34}{tokens:>11,}  {_pct(tokens, window)}  {shown:>12}"


def table(window: Window) -> str:
    """The window as rows: category, tokens, % of the window, chars; then the marks."""
    size = window.window_tokens
    count = t("window.counted" if window.counted else "window.estimated")
    lines = [t("window.title", side=t(f"window.side.{window.side}"), index=window.index,
               model=window.model or "?") + " · " + t(
                   "window.size", window=size, source=t(f"window.source.{window.window_source}")),
             f"  {t('window.col.category'):<34}{t('window.col.tokens'):>11}  "
             f"{t('window.col.pct'):>6}  {t('window.col.chars'):>12}"]
    lines += [_row(t(f"cat.{p.category}"), p.tokens, size, p.chars) for p in window.parts]
    lines.append(_row(t("window.total", count=count), window.tokens, size, window.chars))
    lines.append(_row(t("window.free"), window.free_tokens, size, None))
    if window.over_tokens:
        lines.append(_row(t("window.over"), window.over_tokens, size, None))
    for mark in window.marks:
        lines.append(_row(t(f"window.mark.{mark.kind}", source=t(f"window.how.{mark.source}")),
                          mark.tokens, size, mark.chars))
    buffer = (t("window.buffer", n=window.buffer_tokens,
                source=t(f"window.how.{window.buffer_source}"))
              if window.buffer_tokens is not None else t("window.no_buffer"))
    lines.append("  " + buffer + "  " + t("window.ratio", ratio=window.chars_per_token))
    return "\n".join(lines)


