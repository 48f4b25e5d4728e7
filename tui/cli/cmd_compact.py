"""``ctxlab compact``: one ``prepare()`` on a saved history, outside the workbench.

It answers "what would the engine do to this history before the next model call?" for a
script or a curious user: the stages that fire, what they wrote where, and the history the
model would see. The input is untrusted (hand-edited JSON, a log from another tool), so
every way it can be wrong ends in exit code 2 and one line on stderr that names the file and
the message at fault, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.archive.store import RESULTS_DIR, TRANSCRIPT_DIR
from core.compact.pipeline import Compactor
from core.compact.summary_facts import request_in_summary
from core.config import ConfigError, Thresholds, resolve_thresholds
from core.events import Emitter, Error, Event, PointerBroken, Recorder, Stage
from core.harness_paths import HarnessPathError
from core.measure import json_chars
from core.messages import HistoryError, message_text, validate_pairs
from core.providers.base import ProviderError
from core.providers.registry import (
    ProviderUnavailable,
    close_provider,
    make_summarizer,
    provider_names,
)
from core.sources.agent.saved import history_from_document
from core.untrusted import MAX_DEPTH, UntrustedFileError, read_limited, too_deep
from core.wording import plural
from tui.cli import failure
from tui.cli.flags import add_break_flag, add_threshold_flags, threshold_overrides

PROG = "ctxlab compact"
USAGE_ERROR = 2  # bad input, bad flag, bad setting: the user can fix it
RUN_ERROR = 1  # the input was fine but the run failed (disk, provider)
MAX_INPUT_BYTES = 256_000_000  # a history read whole; larger is no history to compact here

# (flag, Thresholds field): the contract's threshold flags, in its order.


class InputError(Exception):
    """Something the user must fix; the text is the one line shown after ``ctxlab compact:``."""


@dataclass(frozen=True)
class Outcome:
    """Everything one run produced, ready to print either way."""

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    events: list[Event]
    ledger: list[dict[str, Any]]
    workdir: Path

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.after,
            "events": [event.to_json() for event in self.events],
            "ledger": self.ledger,
            "chars_before": json_chars(self.before),
            "chars_after": json_chars(self.after),
            "violations": [v.to_json() for v in validate_pairs(self.after)],
        }


# -- command line ---------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "compact",
        help="apply one prepare() to a saved message history",
        description="Apply one prepare() to a JSON array of messages (Anthropic Messages "
                    "format) as if the next model call were about to happen.",
    )
    parser.add_argument("input", metavar="INPUT.json", help="a JSON array of messages")
    parser.add_argument("--workdir", required=True, metavar="DIR",
                        help="the workspace: archives go under it, ctxlab.toml is read from it")
    parser.add_argument("--active-request", metavar="TEXT", default=None,
                        help="the current user request (default: the last user text, or the "
                             "request an earlier compaction's summary carries)")
    parser.add_argument("--json", action="store_true", dest="as_json",
                        help="print one JSON object instead of a table")
    parser.add_argument("--provider", choices=provider_names(), default="scripted",
                        help="who writes summaries (default: offline, deterministic)")
    add_break_flag(parser)
    add_threshold_flags(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        outcome = asyncio.run(compact_file(args))
    except InputError as exc:
        return fail(str(exc), USAGE_ERROR)
    except RecursionError:  # the input was checked for depth: this is ctxlab's own failure
        return fail("compaction failed: nesting too deep for Python's recursion limit "
                    "(please report it with the input)", RUN_ERROR)
    except HarnessPathError as exc:  # a planted link: bad input, like a refused file
        return fail(str(exc), USAGE_ERROR)
    except OSError as exc:
        return fail(f"could not write the archives under {args.workdir}: {_os_reason(exc)}",
                    RUN_ERROR)
    except ProviderError as exc:
        return fail(f"the summary call failed ({exc.kind}): {exc}", RUN_ERROR)
    before, after = json_chars(outcome.before), json_chars(outcome.after)
    if after > before:  # a compaction never grows the history: this one failed
        return fail(f"compaction failed: it would grow the history ({before:,} → {after:,} "
                    "chars), so the history is left as it was (the archives it wrote stay)",
                    RUN_ERROR)
    if args.as_json:
        write_json(outcome.to_json())
    else:
        print_report(outcome)
    return 0


def fail(message: str, code: int) -> int:
    return failure.fail(PROG, message, code)


# -- the run --------------------------------------------------------------------------------


async def compact_file(args: argparse.Namespace) -> Outcome:
    """Validate everything first, then create the workdir and run one ``prepare()``."""
    breaks = frozenset(args.breaks)
    messages = load_history(Path(args.input), args.input)
    workdir = Path(args.workdir)
    thresholds = read_thresholds(workdir, args)
    recorder = Recorder()
    emit = Emitter(sinks=[recorder])
    try:  # offline unless asked; a model's provider is imported only when it is wanted
        summarizer, provider = make_summarizer(args.provider, emit=emit)
    except ProviderUnavailable as exc:
        raise InputError(str(exc)) from None
    try:
        make_workdir(workdir, args.workdir)
        request = args.active_request if args.active_request is not None \
            else last_request(messages)
        compactor = Compactor(workdir, thresholds, summarizer, emit=emit, breaks=breaks)
        after = await compactor.prepare(messages, request)
    finally:  # on this loop: asyncio.run would leave the SDK's transport to a closed one
        await close_provider(provider)
    return Outcome(messages, after, recorder.events, compactor.ledger, workdir)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def load_history(path: Path, shown: str) -> list[dict[str, Any]]:
    """Read and check the input, naming the file (and the message) in every complaint."""
    try:  # never blocks on a FIFO, never reads /dev/zero until memory runs out
        raw = read_limited(path, MAX_INPUT_BYTES, label=shown)
    except UntrustedFileError as exc:
        raise InputError(str(exc)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: not UTF-8 (bad byte at offset {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{shown}: not JSON: {exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}") from None
    except ValueError as exc:  # NaN/Infinity, integers too long to convert
        raise InputError(f"{shown}: not JSON: {exc}") from None
    except RecursionError:
        raise InputError(f"{shown}: nested too deeply to read") from None
    if too_deep(data):  # caught here, so a RecursionError later is never blamed on the input
        raise InputError(f"{shown}: nested more than {MAX_DEPTH} levels deep")
    try:
        return history_from_document(data)
    except HistoryError as exc:
        raise InputError(f"{shown}: {exc}") from None


def read_thresholds(workdir: Path, args: argparse.Namespace) -> Thresholds:
    """Defaults, then ``ctxlab.toml`` in the workdir, then the flags given."""
    try:
        return resolve_thresholds(workdir, threshold_overrides(args)) or Thresholds()
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise InputError(f"{workdir / 'ctxlab.toml'}: cannot read: {_os_reason(exc)}") from None


def make_workdir(workdir: Path, shown: str) -> None:
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--workdir {shown}: {_os_reason(exc)}") from None


def last_request(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message that has text (tool_result-only turns are skipped);
    when that message is an earlier compaction's summary, the request it carries."""
    for message in reversed(messages):
        if message.get("role") == "user":
            text = message_text(message)
            if text:
                carried = request_in_summary(message)
                return text if carried is None else carried
    return ""


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# -- output ---------------------------------------------------------------------------------


def write_json(data: dict[str, Any]) -> None:
    """One JSON object; non-ASCII kept readable unless stdout cannot encode it."""
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):  # lone surrogates, or a narrow terminal codec
        text = json.dumps(data, ensure_ascii=True)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_report(outcome: Outcome) -> None:
    """A table of the stages that fired, a total, and where the archives are."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False, markup=False, soft_wrap=True)
    stages = [event for event in outcome.events if isinstance(event, Stage)]
    before, after = json_chars(outcome.before), json_chars(outcome.after)
    if not stages:
        console.print(f"no stage fired: {before:,} chars, {len(outcome.before)} messages "
                      "unchanged")
    else:
        table = Table(title="stages fired (files written, tool results affected)",
                      title_justify="left", box=box.SIMPLE_HEAD)
        for column in ("stage", "chars", "messages", "files", "results"):
            table.add_column(column, justify="left" if column == "stage" else "right",
                             no_wrap=True)
        for stage in stages:
            table.add_row(stage.stage, f"{stage.before_chars:,} → {stage.after_chars:,}",
                          f"{stage.before_messages} → {stage.after_messages}",
                          str(len(stage.files)), str(len(stage.tool_use_ids)))
        console.print(table)
        console.print(f"total: {before:,} → {after:,} chars ({_percent(before, after)}), "
                      f"{len(outcome.before)} → {plural(len(outcome.after), 'message')}, "
                      f"{plural(len(stages), 'stage')} fired")
    for event in outcome.events:
        if isinstance(event, PointerBroken):
            console.print(Text.assemble(("broken pointer ", "yellow"),
                                        _printable(f"{event.tool_use_id}: {event.path}")))
        elif isinstance(event, Error):  # e.g. an archive file changed behind ctxlab's back
            console.print(Text.assemble((f"error ({event.kind}) ", "red"),
                                        _printable(event.message)))
    for violation in validate_pairs(outcome.after):
        console.print(Text.assemble(("API violation ", "red"), _printable(
            f"{violation.kind} at message {violation.message_index} ({violation.tool_use_id})")))
    console.print(_printable(archive_summary(outcome.workdir)))


def archive_summary(workdir: Path) -> str:
    results, transcripts = workdir / RESULTS_DIR, workdir / TRANSCRIPT_DIR
    n_results = sum(1 for _ in results.glob("*.txt"))
    n_transcripts = sum(1 for _ in transcripts.glob("transcript_*.jsonl"))
    return (f"archives: {results} ({plural(n_results, 'result file')}), "
            f"{transcripts} ({plural(n_transcripts, 'transcript')})")


def _printable(text: str) -> str:
    """Ids and paths come from the input: escape what a terminal cannot encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _percent(before: int, after: int) -> str:
    if before == 0:
        return "±0%"
    return f"{(after - before) / before:+.1%}"
