"""``ctxlab run --headless``: the agent loop without a UI.

``--json`` prints one event per line on stdout and nothing else; without it, a readable
coloured log (rich) goes to stdout. Exit 0 when the run ends normally; otherwise non-zero
with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, ClassVar

from core.config import ConfigError, load_toml, resolve_thresholds
from core.events import AssistantText, Emitter, Event, RunOutcome, dumps_event
from core.harness_paths import HarnessPathError
from core.providers.api_context import load_api_context
from core.providers.registry import PROVIDERS, choose_provider, provider_names
from core.scenarios import DEFAULT_SCENARIO, ScenarioError, find_scenario
from core.sources.agent.saved import SessionError
from tui.cli import failure
from tui.cli.event_lines import describe_event
from tui.cli.flags import (
    add_api_flags,
    add_break_flag,
    add_threshold_flags,
    api_overrides,
    threshold_overrides,
)

EXIT_USAGE = 2
EXIT_RUN_FAILED = 1


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    add_break_flag(parser)
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
    parser.add_argument("--provider", choices=provider_names(), default=None)
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary workspace of a scenario (default: removed "
                             "at the end; its path is printed either way)")
    parser.add_argument("--json", action="store_true", help="one JSON event per line")
    parser.add_argument("--session", help="save the conversation after each turn")
    parser.add_argument("--resume", help="continue a saved session")
    parser.add_argument("--no-memory", action="store_true", help="run without long-term memory")
    parser.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                        type=_env_name,
                        help="give the tools this variable although it looks like a key or "
                             "token (repeatable; its value is still redacted from results)")
    parser.add_argument("--count-tokens", action="store_true",
                        help="ask the API to count input tokens before each main call "
                             "(anthropic provider; shown beside the estimate)")
    add_common_flags(parser)
    add_threshold_flags(parser)
    add_api_flags(parser)
    parser.set_defaults(handler=run)


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail("ctxlab run", message, code)


def run(args: argparse.Namespace) -> int:
    from core.sources.agent.session import AgentSession, RunOptions

    provider = choose_provider(args.provider, scenario=bool(args.scenario))
    if PROVIDERS[provider].scripted and args.prompt:
        return fail("--prompt needs a model: set ANTHROPIC_API_KEY or use --scenario")
    if not PROVIDERS[provider].scripted and args.scenario:
        return fail("a scenario scripts the model's words: use --provider scripted")
    try:
        scenario = None
        if not args.prompt and not args.resume:
            scenario = find_scenario(args.scenario or DEFAULT_SCENARIO)
        workspace = _workspace(args, scenario is not None)
        thresholds = resolve_thresholds(workspace, threshold_overrides(args),
                                        scenario.thresholds if scenario else None,
                                        scenario.source if scenario else "scenario")
        api_context = load_api_context(load_toml(workspace), api_overrides(args),
                                       str(workspace / "ctxlab.toml"))
        if api_context.active and provider != "anthropic":
            raise ConfigError("the API's context management needs --provider anthropic")
    except (ScenarioError, ConfigError, OSError) as exc:
        from tui.cli.temp_workspaces import remove_all

        remove_all()  # a bad flag or config must not leave the fresh copy behind
        return fail(str(exc))
    options = RunOptions(workspace=workspace, scenario=scenario, prompts=args.prompt or [],
                         provider=provider, model=args.model, thresholds=thresholds,
                         breaks=frozenset(args.breaks), memory=not args.no_memory,
                         session=args.session, resume=args.resume,
                         count_tokens=args.count_tokens, api_context=api_context,
                         pass_env=tuple(args.pass_env))
    sink = JsonSink() if args.json else LogSink()
    try:
        asyncio.run(AgentSession(options, Emitter(sinks=[sink])).run())  # stamps t
    except SessionError as exc:
        return fail(str(exc))
    finally:
        leave_workspace(args, workspace, sink)
    failure = sink.outcome.failure()  # the workbench's verdict too (RunOutcome)
    if failure is not None:
        # a session file or harness folder refused (a link, a FIFO, a tampered file) is bad
        # input, not a failed run: exit 2, as for any other file ctxlab will not read or write
        refused = {SessionError.__name__, HarnessPathError.__name__}
        code = EXIT_USAGE if sink.outcome.error_kind in refused else EXIT_RUN_FAILED
        return fail(failure, code)
    return 0


def _env_name(name: str) -> str:
    """argparse turns the ValueError into one usage line, exit 2."""
    from core.tools.secrets import check_env_name

    try:
        return check_env_name(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workspace(args: argparse.Namespace, scenario: bool) -> Path:
    if args.workspace is not None:
        workspace = args.workspace.resolve()
        if workspace.exists() and not workspace.is_dir():
            # a FIFO or a file there ended the run in "File exists" when the session was saved
            raise ConfigError(f"--workspace {workspace}: not a folder")
        return workspace
    if scenario:
        from tui.cli.temp_workspaces import install_signal_cleanup, make_temp_workspace

        install_signal_cleanup()  # a killed run removes it too
        return make_temp_workspace("ctxlab-")
    return Path.cwd().resolve()


def leave_workspace(args: argparse.Namespace, workspace: Path, sink: Any,
                     prog: str = "ctxlab run") -> None:
    """A temporary workspace is removed unless ``--keep``; either way its path is printed
    (stdout in the readable log, stderr beside ``--json``, whose stdout is events only)."""
    from tui.cli.temp_workspaces import leave, tracked

    if not tracked(workspace):
        return
    note = leave(workspace, args.keep)
    if args.json:
        print(f"{prog}: {note}", file=sys.stderr)
    else:
        sink.console.print(note, style="dim", markup=False)


class JsonSink:
    """JSONL on stdout, flushed per event so a pipe sees events as they happen."""

    def __init__(self) -> None:
        self.outcome = RunOutcome()

    def __call__(self, event: Event) -> None:
        self.outcome.see(event)
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
        self.outcome = RunOutcome()
        self._text = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantText):
            self.console.print(event.delta, end="", style="dim", markup=False)
            self._text = True
            return
        if self._text:
            self.console.print()
            self._text = False
        self.outcome.see(event)
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
