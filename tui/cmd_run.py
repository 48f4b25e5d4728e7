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
from typing import ClassVar

from core.config import ConfigError, resolve_thresholds
from core.events import Emitter, Event, dumps_event
from core.providers.registry import PROVIDERS, choose_provider, provider_names
from core.scenarios import DEFAULT_SCENARIO, ScenarioError, find_scenario
from core.session import SessionError
from tui.event_lines import describe_event
from tui.flags import add_break_flag, add_threshold_flags, threshold_overrides

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
    from core.agent_session import AgentSession, RunOptions

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
    except (ScenarioError, ConfigError, OSError) as exc:
        return fail(str(exc))
    options = RunOptions(workspace=workspace, scenario=scenario, prompts=args.prompt or [],
                         provider=provider, model=args.model, thresholds=thresholds,
                         breaks=frozenset(args.breaks), memory=not args.no_memory,
                         session=args.session, resume=args.resume,
                         count_tokens=args.count_tokens)
    sink = JsonSink() if args.json else LogSink()
    try:
        ok = asyncio.run(AgentSession(options, Emitter(sinks=[sink])).run())  # stamps t
    except SessionError as exc:
        return fail(str(exc))
    if not ok:
        return fail(sink.last_error or "the run did not complete", EXIT_RUN_FAILED)
    return 0


def _workspace(args: argparse.Namespace, scenario: bool) -> Path:
    if args.workspace is not None:
        return args.workspace.resolve()
    if scenario:
        import tempfile

        return Path(tempfile.mkdtemp(prefix="ctxlab-")).resolve()
    return Path.cwd().resolve()


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
