"""A SOURCE run to its events, headless, with what the run wrote that a view quotes.

``ctxlab context`` and ``ctxlab report`` take the same SOURCE and read it here, so both see
the same events (and a script gets the same figures from either).

One SOURCE, four kinds, told apart without asking:

* a ``--json`` event log (``ctxlab run/replay --json``): read back event by event;
* a bundled scenario's name, or a scenario file (``.yaml``): run on the scripted provider in
  a fresh temporary workspace, its stages recording what they saw (the kept summary);
* anything ``ctxlab replay`` reads — a Claude Code or Codex session, a Messages history, a
  saved ``ctxlab run --session`` file (a Messages history with a version), a requests log or
  a watch recording: replayed beside ctxlab's pipeline with the offline summarizer.

The files a run writes (the original agent's summaries under ``.replay/compactions``) live in
a temporary folder removed at the end, so what the report quotes from them is read before
that, capped (:data:`SUMMARY_READ`). Anything that is no SOURCE is a :class:`SourceError`
with one line, as ``ctxlab replay`` says it.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.config import Thresholds, scenario_thresholds
from core.events import (
    EVENT_TYPES,
    Emitter,
    Event,
    RunOutcome,
    RunStart,
    Stage,
    event_from_json,
)

if TYPE_CHECKING:
    from core.sources.replay.model import Recording

# A summary is a few kB; past this the report quotes the start and says the size.
SUMMARY_READ = 64_000
MAX_LOG_BYTES = 512 * 1024 * 1024  # a --json log this large is no log a view could show


class SourceError(ValueError):
    """A SOURCE no view can be drawn from; the message is one line."""


@dataclass
class Collected:
    """A SOURCE's events, and what the run wrote that they name."""

    source: str  # as given
    kind: str  # "scenario", "replay" or "event log"
    events: list[Event]
    summaries: dict[str, str] = field(default_factory=dict)  # a stage's file -> its text
    summary_sizes: dict[str, int] = field(default_factory=dict)  # … and its whole size
    thresholds: Thresholds | None = None  # ctxlab's, when the run knew them
    recording: Recording | None = None  # the session replayed (a what-if reads it again)

    def failure(self) -> str | None:
        """Why the run made here failed (None: it ended well, or was only read back)."""
        if self.kind == "event log":
            return None  # the log of a failed run is still a good SOURCE
        outcome = RunOutcome()
        for event in self.events:
            outcome.see(event)
        return outcome.failure()


def collect(source: str) -> Collected:
    """Run or read ``source`` to the end; :class:`SourceError` when it is none of the kinds."""
    path = Path(source)
    if path.is_dir():
        raise SourceError(f"{source}: is a folder; give a session file, an event log or a "
                          "scenario")
    if path.suffix in (".yaml", ".yml") or not path.exists():
        return _scenario(source)
    if _is_event_log(path):
        return _event_log(path)
    return _replay(path)


def _is_event_log(path: Path) -> bool:
    """Whether the file's first line is one ctxlab event (``type`` and ``t``)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1_000_000).decode("utf-8", "replace").strip()
        data = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("type") in EVENT_TYPES and "t" in data


def _event_log(path: Path) -> Collected:
    if path.stat().st_size > MAX_LOG_BYTES:
        raise SourceError(f"{path}: larger than {MAX_LOG_BYTES // 2**20} MiB; not an event log "
                          "a view could show")
    events: list[Event] = []
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                events.append(event_from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise SourceError(f"{path}: line {number} is not a ctxlab event "
                                  f"({type(exc).__name__}: {exc})") from None
    return Collected(source=str(path), kind="event log", events=events,
                     thresholds=_logged_thresholds(events))


def _logged_thresholds(events: list[Event]) -> Thresholds | None:
    """ctxlab's thresholds for a log of its own run, which no event states: its scenario's
    budget (or the course's defaults for a run with none). A flag or a ``ctxlab.toml``
    that changed them is not in the log; a replay's log says its own in ``replay_start``."""
    from core.scenarios import ScenarioError, find_scenario

    start = next((e for e in events if isinstance(e, RunStart)), None)
    if start is None or start.provider in ("replay", "watch"):
        return None
    if not start.scenario:
        return Thresholds()
    try:
        scenario = find_scenario(start.scenario)
        return scenario_thresholds(scenario.thresholds, scenario.source)
    except (ScenarioError, ValueError):
        return None


def _scenario(source: str) -> Collected:
    from core.config import resolve_thresholds
    from core.scenarios import ScenarioError, find_scenario
    from core.sources.agent.options import RunOptions
    from core.sources.agent.session import AgentSession

    try:
        scenario = find_scenario(source)
    except ScenarioError as exc:
        raise SourceError(f"{source}: no such file, and {exc}") from None
    events: list[Event] = []
    # named as ``ctxlab run --headless`` names its workspace: the system prompt states the
    # path, so the same length gives the same figures as that run
    with tempfile.TemporaryDirectory(prefix="ctxlab-") as folder:
        workspace = Path(folder)
        try:
            thresholds = resolve_thresholds(None, None, scenario.thresholds, scenario.source)
        except ValueError as exc:
            raise SourceError(f"{source}: {exc}") from None
        options = RunOptions(workspace=workspace, scenario=scenario, provider="scripted",
                             thresholds=thresholds, record_stages=True)
        session = AgentSession(options, Emitter(sinks=[events.append]))
        asyncio.run(session.run())
        collected = Collected(source=source, kind="scenario", events=events,
                              thresholds=session.thresholds)
        _read_summaries(collected, workspace)
    return collected


def _replay(path: Path) -> Collected:
    from core.providers.registry import OFFLINE, make_summarizer
    from core.sources.replay import ReplayError, load_recording
    from core.sources.replay.limits import LimitMode
    from core.sources.replay.source import ReplayOptions, ReplaySource

    try:
        recording = load_recording(path)
    except ReplayError as exc:
        raise SourceError(str(exc)) from None
    events: list[Event] = []
    emitter = Emitter(sinks=[events.append])
    summarizer, _ = make_summarizer(OFFLINE)
    with tempfile.TemporaryDirectory(prefix="ctxlab-replay-") as folder:
        options = ReplayOptions(workdir=Path(folder), limits=LimitMode.WINDOW,
                                summarizer=summarizer, seekable=False)
        source = ReplaySource(recording, options)
        asyncio.run(source.run(emitter))
        collected = Collected(source=str(path), kind="replay", events=events,
                              thresholds=source.thresholds, recording=recording)
        _read_summaries(collected, Path(folder))
    return collected


def _read_summaries(collected: Collected, folder: Path) -> None:
    """The start of every Markdown summary a stage names, read before the folder goes."""
    for event in collected.events:
        if not isinstance(event, Stage):
            continue
        for name in event.files:
            if not name.endswith(".md") or name in collected.summaries:
                continue
            file = folder / name
            try:
                with file.open(encoding="utf-8", errors="replace") as handle:
                    collected.summaries[name] = handle.read(SUMMARY_READ)
                collected.summary_sizes[name] = file.stat().st_size
            except OSError:
                continue
