"""``ctxlab run --headless``: the agent loop without a UI.

``--json`` prints one event per line on stdout and nothing else; without it, a readable
coloured log (rich) goes to stdout. Exit 0 when the run ends normally; otherwise non-zero
with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, ClassVar

from core.config import ConfigError, load_thresholds, thresholds_from_mapping
from core.events import Emitter, Event, dumps_event
from core.scenarios import DEFAULT_SCENARIO, ScenarioError, find_scenario
from core.session import SessionError
from tui.flags import add_threshold_flags, threshold_overrides

EXIT_USAGE = 2
EXIT_RUN_FAILED = 1


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    from core.compact.context import BREAK_SWITCHES

    parser.add_argument("--break", dest="breaks", action="append", default=[],
                        choices=BREAK_SWITCHES, metavar="NAME",
                        help=f"disable one protection (teaching lab): {', '.join(BREAK_SWITCHES)}")
    parser.add_argument("--model", default=None, help="model name (or CTXLAB_MODEL)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run the agent loop without a UI")
    parser.add_argument("--headless", action="store_true", required=True,
                        help="required: run without the workbench")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", metavar="NAME|FILE", help="a bundled scenario or a file")
    source.add_argument("--prompt", action="append", metavar="TEXT",
                        help="a user request (repeat for several turns)")
    parser.add_argument("--workspace", type=Path, default=None,
                        help="workspace directory (default: the current one; a scenario gets a "
                             "fresh temporary copy)")
    parser.add_argument("--provider", choices=("scripted", "anthropic"), default=None)
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary workspace of a scenario (default: removed "
                             "at the end; its path is printed either way)")
    parser.add_argument("--json", action="store_true", help="one JSON event per line")
    parser.add_argument("--session", help="save the conversation after each turn")
    parser.add_argument("--resume", help="continue a saved session")
    parser.add_argument("--no-memory", action="store_true", help="run without long-term memory")
    parser.add_argument("--count-tokens", action="store_true",
                        help="ask the API to count input tokens before each main call "
                             "(anthropic provider; shown beside the estimate)")
    add_common_flags(parser)
    add_threshold_flags(parser)
    parser.set_defaults(handler=run)


def fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"ctxlab run: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from core.run import Runner, RunOptions

    provider = args.provider or ("anthropic" if os.environ.get("ANTHROPIC_API_KEY")
                                 and not args.scenario else "scripted")
    if provider == "scripted" and args.prompt:
        return fail("--prompt needs a model: set ANTHROPIC_API_KEY or use --scenario")
    if provider == "anthropic" and args.scenario:
        return fail("a scenario scripts the model's words: use --provider scripted")
    try:
        scenario = None
        if not args.prompt and not args.resume:
            scenario = find_scenario(args.scenario or DEFAULT_SCENARIO)
        workspace = _workspace(args, scenario is not None)
        overrides = threshold_overrides(args)
        base = thresholds_from_mapping(scenario.thresholds, source=scenario.source) \
            if scenario and scenario.thresholds else None
        thresholds = load_thresholds(workspace, overrides, base) if overrides or \
            (workspace / "ctxlab.toml").is_file() else None
    except (ScenarioError, ConfigError, OSError) as exc:
        from tui.temp_workspaces import remove_all

        remove_all()  # a bad flag or config must not leave the fresh copy behind
        return fail(str(exc))
    options = RunOptions(workspace=workspace, scenario=scenario, prompts=args.prompt or [],
                         provider=provider, model=args.model, thresholds=thresholds,
                         breaks=frozenset(args.breaks), memory=not args.no_memory,
                         session=args.session, resume=args.resume,
                         count_tokens=args.count_tokens)
    sink = JsonSink() if args.json else LogSink()
    try:
        ok = asyncio.run(Runner(options, Emitter(sinks=[sink])).run())  # stamps t
    except SessionError as exc:
        return fail(str(exc))
    finally:
        _leave_workspace(args, workspace, sink)
    if not ok:
        return fail(sink.last_error or "the run did not complete", EXIT_RUN_FAILED)
    return 0


def _workspace(args: argparse.Namespace, scenario: bool) -> Path:
    if args.workspace is not None:
        return args.workspace.resolve()
    if scenario:
        from tui.temp_workspaces import install_signal_cleanup, make_temp_workspace

        install_signal_cleanup()  # a killed run removes it too
        return make_temp_workspace("ctxlab-")
    return Path.cwd().resolve()


def _leave_workspace(args: argparse.Namespace, workspace: Path, sink: Any) -> None:
    """A temporary workspace is removed unless ``--keep``; either way its path is printed
    (stdout in the readable log, stderr beside ``--json``, whose stdout is events only)."""
    from tui.temp_workspaces import forget, remove, tracked

    if not tracked(workspace):
        return
    if args.keep:
        forget(workspace)
        note = f"workspace kept: {workspace}"
    else:
        remove(workspace)
        note = f"workspace {workspace} removed (--keep keeps it)"
    if args.json:
        print(f"ctxlab run: {note}", file=sys.stderr)
    else:
        sink.console.print(note, style="dim", markup=False)


class JsonSink:
    """JSONL on stdout, flushed per event so a pipe sees events as they happen."""

    def __init__(self) -> None:
        self.last_error: str | None = None

    def __call__(self, event: Event) -> None:
        if event.type == "error":
            self.last_error = event.message
        text = dumps_event(event)
        try:
            text.encode(sys.stdout.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            # a lone surrogate (a JSON or YAML escape can spell one) or a narrow terminal
            # codec: \u escapes carry the same string, as ``ctxlab compact --json`` does
            text = json.dumps(event.to_json(), ensure_ascii=True)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


class LogSink:
    """A readable, coloured log of the same events."""

    STYLES: ClassVar[dict[str, str]] = {
        "stage": "bold magenta", "error": "bold red", "tool_call": "cyan",
        "memory_written": "green", "memory_rejected": "yellow", "memory_selected": "green",
        "turn_start": "bold", "run_end": "bold", "violation": "bold red",
    }

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(highlight=False)
        # a pipe has no width: lines stay whole (rich would hard-wrap them at 80 columns)
        self.console.soft_wrap = not self.console.is_terminal
        self.last_error: str | None = None
        self._text = False

    def __call__(self, event: Event) -> None:
        if event.type == "assistant_text":
            self.console.print(event.delta, end="", style="dim", markup=False)
            self._text = True
            return
        if self._text:
            self.console.print()
            self._text = False
        if event.type == "error":
            self.last_error = event.message
        line = describe_event(event)
        if line:
            self.console.print(f"[{event.t:7.2f}s] ", end="", style="dim")
            self.console.print(line, style=self.STYLES.get(event.type, ""), markup=False)
        for lost in lost_lines(event):
            self.console.print(f"[{event.t:7.2f}s] ", end="", style="dim")
            self.console.print(lost, style="bold red", markup=False)


def lost_lines(e: Any) -> list[str]:
    """One ``LOST`` line per ledger entry of a stage that kept the output nowhere."""
    if e.type != "stage":
        return []
    return [f"  LOST {entry.get('tool_use_id', '?')}: {entry.get('chars', 0):,} chars "
            f"({entry.get('stage', e.stage)}) exist nowhere, not in the context nor on disk"
            for entry in e.ledger if entry.get("where") == "lost"]


def describe_event(e: Any) -> str | None:
    """One human line per event (None for events not worth a line)."""
    kind = e.type
    if kind == "run_start":
        return f"run start: {e.provider} in {e.workspace}" + (
            f" (scenario {e.scenario})" if e.scenario else "")
    if kind == "session_start":
        return f"── session {e.session} of {e.sessions} ──"
    if kind == "turn_start":
        return f"user: {e.request}"
    if kind == "model_request":
        counted = f" ({e.counted_tokens:,} counted by the API)" if e.counted_tokens else ""
        return f"→ {e.purpose} call: {e.chars:,} chars, ~{e.est_tokens:,} tokens{counted}, " \
               f"{e.messages} messages"
    if kind == "tool_call":
        return f"tool {e.name} {e.input}"
    if kind == "tool_result":
        return f"  ← {e.name}: {e.chars:,} chars" + (" (error)" if e.is_error else "")
    if kind == "stage":
        files = f", wrote {len(e.files)} file(s)" if e.files else ""
        return (f"{e.stage}: {e.before_chars:,} → {e.after_chars:,} chars, "
                f"{e.before_messages} → {e.after_messages} messages{files}")
    if kind == "memory_selected":
        return f"memory recalled ({e.method}): {', '.join(e.files) or 'none'}"
    if kind == "memory_written":
        return f"memory written: {e.file} ({e.record_type})"
    if kind == "memory_rejected":
        return f"memory rejected: {e.name} — {e.reason}"
    if kind == "memory_consolidated":
        dropped = f" (removed: {', '.join(e.dropped)})" if e.dropped else ""
        return f"memory consolidated: {e.before} → {e.after} records{dropped}"
    if kind in ("memory_consolidation_failed", "pointer_broken"):
        return f"{kind}: {e.reason}"
    if kind == "retry":
        return f"retrying {e.purpose} call (attempt {e.attempt}): {e.reason}"
    if kind == "error":
        return f"error ({e.kind}): {e.message}"
    if kind == "violation":
        return f"API violation: {e.kind} {e.tool_use_id} at message {e.message_index}" + (
            f" (after {e.stage})" if e.stage else "")
    if kind == "probe":
        where = f" in {', '.join(e.found_in)}" if e.found_in else ""
        return f"probe {'answerable' if e.answerable else 'NOT answerable'}{where}: {e.ask}"
    if kind == "turn_end":
        return f"turn end: {e.chars:,} chars in context"
    if kind == "run_end":
        return f"run end: {'ok' if e.ok else 'failed'} after {e.turns} turn(s)"
    return None
