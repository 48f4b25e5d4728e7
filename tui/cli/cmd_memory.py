"""``ctxlab memory``: the memory store outside the UI.

``list``, ``show NAME`` and ``check`` only read (they create, lock and repair nothing);
``reindex``, ``watch`` and ``consolidate`` open the store for writing, which also finishes
an interrupted consolidation. ``--dir`` is the memory folder itself (default ``./.memory``).
Bad input is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.events import Emitter, Event, IndexRebuilt, MemoryRejected, Recorder, dumps_event
from core.wording import plural

DEFAULT_DIR = Path(".memory")
ACTIONS = ("list", "show", "check", "reindex", "watch", "consolidate")


class CliError(Exception):
    """Bad input; printed as one line, exit status 2."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                        help="the memory folder itself (default: ./.memory)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="machine-readable output")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "memory", help="list, check, reindex, watch or consolidate the memory store",
        description="The long-term memory store (.memory/) outside the UI.")
    _common(parser)
    actions = parser.add_subparsers(dest="memory_action", metavar="ACTION", required=True)
    helps = {
        "list": "list the valid records",
        "show": "print one record",
        "check": "validate every file (changes nothing)",
        "reindex": "rebuild MEMORY.md from the records",
        "watch": "rebuild the index whenever a file changes, until interrupted",
        "consolidate": "merge duplicate records (offline consolidator)",
    }
    for action in ACTIONS:
        sub = actions.add_parser(action, help=helps[action], description=helps[action])
        _common(sub)
        if action == "show":
            sub.add_argument("name", help="record name, file name or slug")
        if action == "check":
            sub.add_argument("--strict", action="store_true",
                             help="exit 1 when any file is invalid")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    handler: Callable[[argparse.Namespace], int] = globals()[f"_do_{args.memory_action}"]
    try:
        return handler(args)
    except CliError as exc:
        return _fail(str(exc))
    except (ValueError, OSError) as exc:  # MemoryStoreError is a ValueError
        return _fail(_one_line(exc))


def main(argv: list[str] | None = None) -> int:
    """Run ``memory`` on its own (``python -m tui.cli.cmd_memory list``)."""
    from tui.cli.failure import OneLineParser, parse_or_exit

    parser = OneLineParser(prog="ctxlab")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parse_or_exit(parser, ["memory", *(sys.argv[1:] if argv is None else argv)])
    return int(args.handler(args))


def _fail(message: str) -> int:
    print(f"ctxlab memory: {message}", file=sys.stderr)
    return 2


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _folder(args: argparse.Namespace) -> Path:
    root = Path(getattr(args, "dir", DEFAULT_DIR))
    if not root.exists():
        raise CliError(f"memory folder not found: {root} (pass --dir DIR)")
    if not root.is_dir():
        raise CliError(f"not a folder: {root}")
    return root


def _store(args: argparse.Namespace, *, write: bool) -> Any:
    from core.memory.store import MemoryStore

    return MemoryStore(_folder(args), read_only=not write)


def _json_mode(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False))


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def _table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


# -- actions --------------------------------------------------------------------------------


def _do_list(args: argparse.Namespace) -> int:
    scan = _store(args, write=False).scan()
    if _json_mode(args):
        _print_json([r.summary() for r in scan.records])
        return 0
    console = _console()
    rows = [(r.file, r.name, r.type, r.description) for r in scan.records]
    console.print(_table(f"{len(rows)} memory records", ("file", "name", "type", "description"),
                         rows))
    if scan.invalid:
        console.print(f"{plural(len(scan.invalid), 'invalid file')}: run `ctxlab memory check`",
                      markup=False)
    return 0


def _do_show(args: argparse.Namespace) -> int:
    store = _store(args, write=False)
    record = store.get(args.name)
    if record is None:
        bad = next((f for f in store.invalid() if f.file in (args.name, f"{args.name}.md")), None)
        if bad is not None:
            raise CliError(f"{bad.file} is not a valid record: {bad.reason}")
        raise CliError(f"no memory record named {args.name!r}")
    if _json_mode(args):
        _print_json({**record.summary(), "body": record.body})
        return 0
    console = _console()
    console.print(_table(record.file, ("field", "value"), [
        ("name", record.name), ("type", record.type), ("description", record.description)]))
    console.print(record.body, markup=False, highlight=False)
    return 0


def _do_check(args: argparse.Namespace) -> int:
    store = _store(args, write=False)
    scan = store.scan()
    if store.pending_recovery():
        print("ctxlab memory: an interrupted consolidation will be completed when the store "
              "is next opened for writing", file=sys.stderr)
    if _json_mode(args):
        _print_json({"valid": [r.summary() for r in scan.records],
                     "invalid": [f.to_json() for f in scan.invalid]})
    else:
        console = _console()
        console.print(_table(f"{len(scan.records)} valid", ("file", "name", "type", "description"),
                             [(r.file, r.name, r.type, r.description) for r in scan.records]))
        console.print(_table(f"{len(scan.invalid)} invalid (left untouched)", ("file", "reason"),
                             [(f.file, f.reason) for f in scan.invalid]))
    return 1 if scan.invalid and getattr(args, "strict", False) else 0


def _describe(event: IndexRebuilt) -> str:
    changed = ", ".join(event.changed) if event.changed else "-"
    return (f"{time.strftime('%H:%M:%S')} index rebuilt ({event.trigger}): {event.records} "
            f"records, {event.invalid} invalid; changed: {changed}")


def _do_reindex(args: argparse.Namespace) -> int:
    store = _store(args, write=True)
    event = Emitter()(store.rebuild_index("command", notify=False))
    if _json_mode(args):
        print(dumps_event(event))
    else:
        print(_describe(event))
    return 0


def _do_watch(args: argparse.Namespace) -> int:
    from core.memory.watch import MemoryWatcher

    store = _store(args, write=True)
    json_mode = _json_mode(args)
    lock = threading.Lock()

    def show(event: Event) -> None:
        with lock:
            try:
                if isinstance(event, IndexRebuilt):
                    print(dumps_event(event) if json_mode else _describe(event), flush=True)
                else:
                    print(f"ctxlab memory: {getattr(event, 'message', event)}",
                          file=sys.stderr, flush=True)
            except (BrokenPipeError, ValueError):
                stop.set()

    stop = threading.Event()
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, lambda *_: stop.set())
    watcher = MemoryWatcher(store, Emitter([show]))
    try:
        watcher.start()
        print(f"watching {store.root} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        watcher.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _do_consolidate(args: argparse.Namespace) -> int:
    import asyncio

    from core.memory.consolidate import consolidate_memories

    recorder = Recorder()
    store = _store(args, write=True)
    result = asyncio.run(consolidate_memories(store, None, Emitter([recorder]), force=True))
    if _json_mode(args):
        _print_json({"ok": result.ok, "before": result.before, "after": result.after,
                     "batches": result.batches, "history": result.history,
                     "dropped": list(result.dropped), "reason": result.reason or None,
                     "events": [e.to_json() for e in recorder.events]})
    elif result.ok:
        print(f"consolidated {result.before} to {result.after} records"
              + (f" (snapshot: {result.history})" if result.history else " (nothing to merge)"))
        for file in result.dropped:
            print(f"  removed {file} (same fact as a newer record; copy in "
                  f"{result.history}/old/{file})")
        for event in recorder.of(MemoryRejected):
            print(f"  dropped {event.name!r}: {event.reason}")
    if not result.ok:
        print(f"ctxlab memory: consolidation failed: {result.reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
