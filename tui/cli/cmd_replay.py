"""``ctxlab replay PATH``: a recorded session played beside ctxlab's own pipeline.

The session file is only read. Everything the replay writes (ctxlab's archive, transcripts,
the original agent's summaries) goes to a fresh temporary folder — removed at the end of a
headless replay unless ``--keep``, as ``run --headless`` does — or to ``--workdir`` when
it is empty or an earlier replay's folder — never next to the session file. ``--headless``
prints the event stream like ``ctxlab run --headless`` (``--json``: one event per line);
without it the workbench opens on the replay (:func:`open_workbench`), its temporary folder
removed when the workbench closes unless ``--workdir`` named it. Exit 0 when the whole
recording was replayed; 2 with one line on stderr when the file cannot be replayed; 1 when
the replay failed midway.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.config import ConfigError, Thresholds, thresholds_from_mapping
from core.events import Emitter, Event, Stage
from core.harness_paths import HarnessPathError
from core.providers.registry import (
    OFFLINE,
    ProviderUnavailable,
    close_provider,
    make_summarizer,
    summarizer_names,
)
from core.sources.controls import MAX_DELAY
from core.usage import context_tokens
from core.wording import plural
from tui.cli import failure
from tui.cli.cmd_run import JsonSink, LogSink, add_common_flags, describe_event, leave_workspace
from tui.cli.flags import Checked, add_threshold_flags, integer, number, threshold_overrides

PROG = "ctxlab replay"
EXIT_USAGE = 2
EXIT_FAILED = 1
FORMAT_CHOICES = ("auto", "claude-code", "codex", "messages", "requests")
WORKBENCH_SPEED = 1.0  # requests per second when the workbench opens without --speed
MIN_SPEED = 1 / MAX_DELAY  # slower, a step would wait minutes (1e-300: forever)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("replay", help="replay a recorded Claude Code, Codex or "
                            "Messages session beside ctxlab's pipeline")
    parser.add_argument("path", type=Path, metavar="PATH", help="the session file")
    parser.add_argument("--format", choices=FORMAT_CHOICES, default="auto",
                        help="the file's format (default: detected)")
    parser.add_argument("--headless", action="store_true", help="print the event log")
    parser.add_argument("--json", action="store_true", help="one JSON event per line")
    parser.add_argument("--workdir", type=Path, default=None, metavar="DIR",
                        help="where ctxlab's archive goes (default: a fresh temporary folder)")
    parser.add_argument("--provider", choices=summarizer_names(), default=OFFLINE,
                        help="who writes ctxlab's summaries (default: offline)")
    parser.add_argument("--context-limit-tokens", action=Checked, check=integer(),
                        default=None, metavar="N",
                        help="the context limit in tokens, converted to chars with the "
                             "session's measured chars-per-token ratio")
    parser.add_argument("--course-limits", action="store_true",
                        help="run ctxlab's side at the course's limits (50,000 chars, 50 "
                             "messages) instead of limits scaled to the recorded model's "
                             "context window")
    parser.add_argument("--conversation", default=None, metavar="ID",
                        help="which conversation of a watch recording to replay (default: "
                             "the longest; replay_start lists them)")
    parser.add_argument("--speed", action=Checked, check=number(), default=None, metavar="REQ/S",
                        help="requests per second (0: as fast as possible; else at least "
                             f"{MIN_SPEED:g}; default 0 headless, {WORKBENCH_SPEED:g} in the "
                             "workbench)")
    parser.add_argument("--max-mb", action=Checked, check=number(), default=None, metavar="MB",
                        help="refuse larger files (default 64)")
    parser.add_argument("--keep", action="store_true",
                        help="--headless only: keep the temporary folder the replay wrote "
                             "(default: removed at the end, its path printed)")
    parser.add_argument("--with-subagents", action="store_true",
                        help="--headless: end with the totals of the session and its "
                             "subagent transcripts (their requests, compactions, tokens)")
    add_common_flags(parser)
    add_threshold_flags(parser)
    parser.set_defaults(handler=run)


def fail(message: str, code: int = EXIT_USAGE) -> int:
    return failure.fail(PROG, message, code)


def thresholds(args: argparse.Namespace) -> Thresholds:
    overrides = threshold_overrides(args)
    if args.context_limit_tokens is not None:
        if "context_limit" in overrides:
            raise ConfigError("give --context-limit (chars) or --context-limit-tokens, "
                              "not both")
        if args.context_limit_tokens <= 0:
            raise ConfigError("--context-limit-tokens: must be positive")
        if args.course_limits:
            raise ConfigError("give --course-limits or --context-limit-tokens, not both")
    return thresholds_from_mapping(overrides, source="command line")


def limit_options(args: argparse.Namespace) -> dict[str, Any]:
    """How ctxlab's side gets its limits: the course's when asked, else scaled to the
    recorded model's window (or to --context-limit-tokens); flags given stay as given."""
    from core.sources.replay.limits import LimitMode

    return {"context_limit_tokens": args.context_limit_tokens,
            "limits": LimitMode.COURSE if args.course_limits else LimitMode.WINDOW,
            "explicit": frozenset(threshold_overrides(args))}


def workdir(args: argparse.Namespace) -> Path:
    """A fresh temporary folder (removed at the end, or if the process is killed, unless
    ``--keep``: a headless replay copies the session's tool outputs and summaries there,
    and left one per run behind), or ``--workdir`` if it is safe to write into."""
    if args.workdir is None:
        from tui.cli.temp_workspaces import install_signal_cleanup, make_temp_workspace

        install_signal_cleanup()
        return make_temp_workspace("ctxlab-replay-")
    chosen = args.workdir.resolve()
    if chosen == args.path.resolve().parent:
        raise ConfigError(f"--workdir {args.workdir}: is the session file's own folder; "
                          "nothing is written next to a session file")
    if chosen.is_file():
        raise ConfigError(f"--workdir {args.workdir}: is a file")
    if chosen.exists() and not chosen.is_dir():  # a FIFO, a device, a socket
        raise ConfigError(f"--workdir {args.workdir}: is not a directory")
    if chosen.is_dir() and any(chosen.iterdir()) and not (chosen / ".replay").is_dir():
        raise ConfigError(f"--workdir {args.workdir}: is not empty and not a replay folder")
    try:  # now, so a folder that cannot be made is one line, not a traceback mid-replay
        chosen.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--workdir {args.workdir}: cannot be created "
                          f"({exc.strerror or exc})") from None
    return chosen


def run(args: argparse.Namespace) -> int:
    from core.sources.replay import MAX_BYTES, ReplayError, load_recording

    if args.speed is not None and args.speed < 0:
        return fail("--speed: must be 0 or more")
    if args.speed and args.speed < MIN_SPEED:
        return fail(f"--speed {args.speed:g}: must be 0 (as fast as possible) or at least "
                    f"{MIN_SPEED:g} (one request every {1 / MIN_SPEED:g} s)")
    if args.max_mb is not None and args.max_mb <= 0:
        return fail("--max-mb: must be positive")
    if args.keep and not args.headless:  # it would keep nothing, and say nothing
        return fail("--keep is for --headless: the workbench removes its temporary folder "
                    "when it closes (--workdir DIR replays into a folder that stays)")
    try:
        limits = thresholds(args)
        max_bytes = int(args.max_mb * 1e6) if args.max_mb else MAX_BYTES
        recording = load_recording(args.path, args.format, max_bytes, args.conversation)
        if not args.headless:  # the workbench makes (and removes) its own temporary folder
            chosen = workdir(args) if args.workdir is not None else None
            return open_workbench(args, recording, limits, chosen)
        folder = workdir(args)
    except (ReplayError, ConfigError) as exc:
        return fail(str(exc))
    sink = JsonSink() if args.json else ReplayLogSink()
    try:
        return _replay_headless(args, recording, limits, folder, sink)
    finally:
        leave_workspace(args, folder, sink, PROG)


def _replay_headless(args: argparse.Namespace, recording: Any, limits: Thresholds,
                     folder: Path, sink: JsonSink | ReplayLogSink) -> int:
    from core.sources.replay.source import ReplayOptions, ReplaySource

    emitter = Emitter(sinks=[sink])
    try:
        summarizer, provider = make_summarizer(args.provider, model=args.model, emit=emitter,
                                               on_retry=emitter,
                                               max_tokens=limits.summary_max_tokens)
    except ProviderUnavailable as exc:
        return fail(str(exc))
    options = ReplayOptions(workdir=folder, thresholds=limits, **limit_options(args),
                            summarizer=summarizer, speed=args.speed or 0.0,
                            breaks=frozenset(args.breaks), seekable=False,
                            stages_in_thread=False)

    async def replay() -> bool:
        # The SDK client is bound to this event loop: close it here, before asyncio.run ends
        # the loop, or its transport is finalised later on a closed loop.
        try:
            return await ReplaySource(recording, options).run(emitter)
        finally:
            await close_provider(provider)

    try:
        asyncio.run(replay())
    except ConfigError as exc:  # a token limit that converts to an invalid char limit
        return fail(str(exc))
    if (failure := sink.outcome.failure()) is not None:
        # a harness folder refused (a planted link) is bad input, as in run and compact
        refused = sink.outcome.error_kind == HarnessPathError.__name__
        return fail(failure, EXIT_USAGE if refused else EXIT_FAILED)
    if args.with_subagents and not args.json:  # (--json: replay_start holds the totals)
        print(with_subagents(recording))
    return 0


def with_subagents(recording: Any) -> str:
    """The session's requests, compactions and input tokens with its subagents' added:
    ``with 1 subagent: 11 requests (9 + 2), …``. A subagent that could not be read is
    counted as such, never as zero work."""
    from core.usage import context_tokens

    subs = recording.subagents_read
    unread = [s for s in subs if s.error]
    main = (len(recording.exchanges), len(recording.compactions),
            sum(context_tokens(e.usage) or 0 for e in recording.exchanges))
    theirs = (sum(s.requests for s in subs), sum(s.compactions for s in subs),
              sum(s.input_tokens for s in subs))
    parts = [f"{a + b:,} {name} ({a:,} + {b:,})" for a, b, name in
             zip(main, theirs, ("requests", "compactions", "tokens in"), strict=True)]
    text = f"with {len(subs)} subagent{'' if len(subs) == 1 else 's'}: " + ", ".join(parts)
    if unread:
        text += f"; {len(unread)} could not be read ({unread[0].path}: {unread[0].error})"
    return text


def open_workbench(args: argparse.Namespace, recording: Any, limits: Thresholds,
                   chosen: Path | None) -> int:
    """The workbench on the replay: the same panels as a live run, a replay's controls.

    ``chosen`` is ``--workdir`` (kept); ``None`` lets the app make a temporary folder that
    it removes on exit, like a demo's workspace (:mod:`tui.cli.temp_workspaces`).
    """
    from core.sources.replay.source import ReplayOptions, ReplaySource
    from tui.app_config import AppConfig
    from tui.cli.cmd_app import language_from_args, launch

    try:  # one summarizer for every run of the workbench: they share the app's loop
        summarizer, _ = make_summarizer(args.provider, model=args.model,
                                        max_tokens=limits.summary_max_tokens)
    except ProviderUnavailable as exc:
        return fail(str(exc))

    def make(folder: Path) -> ReplaySource:
        options = ReplayOptions(workdir=folder, thresholds=limits, **limit_options(args),
                                summarizer=summarizer, breaks=frozenset(args.breaks),
                                hold_at_end=True)
        return ReplaySource(recording, options)

    speed = WORKBENCH_SPEED if args.speed is None else args.speed
    # Opened paused at the start: a session is read at the reader's pace (space, s, n), and
    # a replay already under way has passed what it was opened to show.
    config = AppConfig(scenario=None, source=make, workspace=chosen, paused=True,
                       speed=speed if speed > 0 else 1000.0, provider="replay",
                       model=recording.model, breaks=frozenset(args.breaks),
                       lang=language_from_args(args))
    return launch(config, None)


def subagent_words(totals: dict[str, Any] | None) -> str:
    """`` (general-purpose, 2 requests, 2,100 tokens in)`` for a subagent's totals."""
    if not totals:
        return ""
    if totals.get("error"):
        return " (could not be read)"
    return (f" ({totals.get('agent_type') or '?'}, "
            f"{plural(int(totals.get('requests') or 0), 'request')}, "
            f"{plural(int(totals.get('compactions') or 0), 'compaction')}, "
            f"{plural(int(totals.get('input_tokens') or 0), 'token')} in)")


def describe_replay(e: Any) -> str | None:
    """One human line for the replay's own events, and for another agent's stage."""
    if e.type == "replay_start":
        unit = (f"{e.context_limit_tokens:,} tokens = {e.context_limit:,} chars"
                if e.unit == "tokens" else f"{e.context_limit:,} chars")
        skipped = ", ".join(f"{n:,} {k}" for k, n in sorted(e.skipped.items()))
        lines = [f"replaying {e.format} session {e.path}: {plural(e.requests, 'request')}, "
                 f"{plural(e.compactions, 'compaction')} by {e.agent}; read {e.lines_read:,} of "
                 f"{e.lines_total:,} lines" + (f" (skipped {skipped})" if skipped else ""),
                 f"  {e.chars_per_token:.2f} chars per token ({e.ratio_source}); context "
                 f"limit {unit} (unit: {e.unit})",
                 "  ctxlab's limits: " + e.limits_line()]
        lines += conversation_lines(e)
        read = {str(row.get("path")): row for row in e.subagent_totals}
        lines += [f"  subagent transcript: {p}{subagent_words(read.get(p))}  (open it with "
                  "ctxlab replay)" for p in e.subagents]
        return "\n".join(lines)
    if e.type == "replay_notice":
        return f"notice ({e.kind}): {e.message}"
    if e.type == "replay_step":
        tokens = f", {e.original_tokens:,} tokens" if e.original_tokens else ""
        return (f"request {e.index}/{e.total}: original {e.original_chars:,} chars"
                f"{tokens} in {plural(e.original_messages, 'message')} | ctxlab "
                f"{e.ctxlab_chars:,} chars in {plural(e.ctxlab_messages, 'message')}")
    if e.type == "stage" and e.by != Manager.PIPELINE:
        at = f" at {e.pre_tokens:,} tokens" if e.pre_tokens else ""
        at += f" → {e.post_tokens:,} tokens" if e.post_tokens else ""
        summary = f"; summary in {e.files[0]}" if e.files else ""
        cost = ""
        if e.usage:  # the compaction call itself, when the recording holds it
            cost = (f"; its own call {context_tokens(e.usage):,} tokens in, "
                    f"{e.usage.get('output_tokens') or 0:,} out")
        return (f"{e.by} {e.stage.replace('_', '-')}{at}: {e.before_chars:,} → "
                f"{e.after_chars:,} chars, {e.before_messages} → "
                f"{plural(e.after_messages, 'message')}"
                f"{summary}{cost}")
    if e.type == "run_end":  # a replay's "turns" are the recorded requests it played
        return f"replay end: {'ok' if e.ok else 'failed'} after {plural(e.turns, 'request')}"
    if e.type == "model_request" and e.purpose in ("original", "main"):
        return None  # replay_step says both at once
    if e.type in ("model_response", "assistant_text") and getattr(e, "purpose", "") in (
            "original", ""):
        return None
    return describe_event(e)


def conversation_lines(e: Any) -> list[str]:
    """A watch recording's conversations, the one replayed marked, and its side calls."""
    if len(e.conversations) < 2 and not e.side_calls:
        return []
    lines = [f"  {'*' if c['id'] == e.conversation else ' '} conversation {c['id']}: "
             f"{c['requests']:,} requests from line {c['first_line']:,}  {c['label']}"
             for c in e.conversations]
    if len(e.conversations) > 1:
        lines.append("  (* replayed; another with --conversation ID)")
    if e.side_calls:
        lines.append(f"  {plural(e.side_calls, 'side call')} (titles, probes, count_tokens) "
                     "kept apart")
    return lines


class ReplayLogSink(LogSink):
    """``ctxlab run``'s log, with lines for the replay's events."""

    def __call__(self, event: Event) -> None:
        self.outcome.see(event)
        line = describe_replay(event)
        if line:  # text from the recording may hold lone surrogates: shown as escapes
            line = line.encode("utf-8", "backslashreplace").decode("utf-8")
            self.console.print(f"[{event.t:7.2f}s] ", end="", style="dim")
            theirs = isinstance(event, Stage) and event.by != Manager.PIPELINE
            style = "bold yellow" if theirs else self.STYLES.get(event.type, "")
            self.console.print(line, style=style, markup=False)
