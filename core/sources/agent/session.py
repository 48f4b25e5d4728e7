"""One agent session: ctxlab's own loop as an event source (:class:`~core.sources.Source`).

The workbench, ``ctxlab run --headless``, ``compare`` and the tests all drive this object
through the source's controls: run, send a prompt, pause / step / resume, pace, play to the
next stage, change the thresholds, finish, cancel. It prepares the workspace, picks the
provider, plays each turn through an :class:`~core.sources.agent.loop.Agent`, and saves the
session and its work log after every turn; the base class turns any failure into one
``error`` event and ends with exactly one ``run_end``.

A scripted scenario or a list of prompts is played and the run ends. An *interactive*
session (the workbench's live mode) then waits for prompts (:meth:`send`) until
:meth:`finish`: several prompts are one session, one ``run_start`` and one ``run_end``, and a
turn that fails is reported while the session stays open for the next prompt.

Every run keeps a work log (:mod:`core.sources.agent.worklog`) beside its session — under the
``--session`` name, else ``default`` — saved after each turn (and after a failed one: what
the tools did happened), and loaded back by ``--resume``. After each scripted turn, each of
the turn's probes is checked against what the next main call would send, and reported as a
``probe`` event.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Self

from core.config import Thresholds, scenario_thresholds
from core.events import Error, Rewind, RunStart, SessionStart, Sink
from core.memory.store import MemoryStore
from core.memory.watch import MemoryWatcher
from core.providers.api_context import ApiContext
from core.providers.base import Provider, awaits_retry_sink
from core.providers.scripted import ScriptedProvider
from core.scenarios import DEFAULT_SCENARIO, find_scenario
from core.scenarios.prepare import prepare_workspace
from core.sources import Capability, Source
from core.sources.agent.loop import Agent
from core.sources.agent.options import RunOptions, make_provider, use_api_context
from core.sources.agent.probes import check_probe
from core.sources.agent.rerun import RequestGate, StartAgain, empty_workspace, generated_here
from core.sources.agent.saved import check_save_target, load_session, save_session
from core.sources.agent.worklog import (
    DEFAULT_SESSION,
    WorkLog,
    WorkLogError,
    check_worklog_target,
    load_worklog,
    save_worklog,
    worklog_path,
)

__all__ = ["DEFAULT_SESSION", "AgentSession", "RunOptions"]

PLAYED = frozenset({Capability.PAUSE, Capability.STEP, Capability.PACE,
                    Capability.NEXT_STAGE, Capability.THRESHOLDS, Capability.CANCEL})
INTERACTIVE = PLAYED | {Capability.SEND, Capability.FINISH}
# a scripted scenario in a workspace it generates can go back (core.sources.agent.rerun)
REPLAYABLE = PLAYED | {Capability.SEEK}


class AgentSession(Source):
    """ctxlab's agent loop as an event source; see the module docstring."""

    step_period = 0.8  # seconds before each main model call at speed ×1
    word_period = 0.03  # seconds per streamed word of a scripted reply at speed ×1

    def __init__(self, options: RunOptions, emit: Sink | None = None, *,
                 paused: bool = False, provider: Provider | None = None) -> None:
        super().__init__(emit, paused=paused)
        self.options = options
        self.provider = provider
        self.capabilities = INTERACTIVE if options.interactive else \
            REPLAYABLE if self._replayable() else PLAYED
        self.gate = RequestGate(self.controls, self._pace_words)
        self.agent: Agent | None = None
        self._store: MemoryStore | None = None
        self._watcher: MemoryWatcher | None = None
        self._unsaved = False  # a turn began and its end did not save the work log
        self.name = options.scenario.name if options.scenario else "live"
        try:
            self.thresholds = self._asked_thresholds()
        except ValueError:  # a scenario's budget that does not validate fails at open()
            pass

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        """The bundled default scenario, on the scripted model."""
        return cls(RunOptions(workspace=workdir, scenario=find_scenario(DEFAULT_SCENARIO)))

    # -- settings -------------------------------------------------------------------------------

    @property
    def workspace(self) -> Path:
        return self.options.workspace

    def _asked_thresholds(self) -> Thresholds:
        """The limits the options ask for: given ones, else the scenario's, else defaults."""
        scenario = self.options.scenario
        if self.options.thresholds is not None:
            return self.options.thresholds
        if scenario is not None:
            return scenario_thresholds(scenario.thresholds, scenario.source)
        return Thresholds()

    def set_thresholds(self, value: Thresholds) -> None:
        """New limits, from the next ``prepare()`` on (and for every later agent)."""
        super().set_thresholds(value)
        self.options.thresholds = value
        if self.agent is not None:
            self.agent.compactor.thresholds = value

    def _replayable(self) -> bool:
        """Deterministic and starting from nothing: a scripted scenario in a workspace it
        generates (a model's answers differ each time; a person's files are not ours)."""
        opts = self.options
        return opts.scenario is not None and opts.provider == "scripted" and \
            self.provider is None and not opts.resume and generated_here(opts.workspace)

    def set_speed(self, speed: float) -> None:
        super().set_speed(speed)
        self._pace_words()

    def _pace_words(self) -> None:
        """The scripted reply's word pace follows the controls (none while seeking)."""
        if isinstance(self.provider, ScriptedProvider):
            self.provider.word_delay = self.controls.word_delay

    @property
    def position(self) -> int:
        """Main model requests sent so far: what :meth:`seek` counts, as in a replay."""
        return self.gate.requests

    @property
    def session_name(self) -> str:
        """Where this run's session files go (``default`` when no name was given)."""
        return self.options.session or self.options.resume or DEFAULT_SESSION

    # -- what the engine holds, read-only for front ends ----------------------------------------

    def original(self, tool_use_id: str) -> Any:
        """A tool result's original content, from the history the engine never compacts
        (a result persisted to disk is read back from its file); None if unknown."""
        agent = self.agent
        for message in reversed(agent.full_history if agent else []):
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("tool_use_id") == tool_use_id:
                        return self._read_back(tool_use_id, block.get("content", ""))
        return None

    def _read_back(self, tool_use_id: str, content: Any) -> Any:
        archive = self.agent.compactor.archive if self.agent is not None else None
        path = archive.trusted_pointer(tool_use_id, content) if archive else None
        return archive.read_result(path) if archive and path else content

    # -- memory: one store per workspace, shared by the agent and every front end ---------------

    @property
    def memory_store(self) -> MemoryStore | None:
        """The workspace's store (None with memory off). Open it after the workspace was
        prepared: creating ``.memory`` first would stop a scenario's files being generated.
        Its writes — the agent's and a front end's — are events on this session's stream."""
        if self._store is None and self.options.memory:
            self._store = MemoryStore(self.options.workspace / ".memory", self.emit)
        return self._store

    def watch_memory(self) -> None:
        """Follow hand edits of ``.memory/``: each rebuild they cause arrives on the event
        stream as ``index_rebuilt`` with trigger ``watch`` (ctxlab's own writes never do, so
        no time window is needed to tell them apart). Raises OSError if it cannot watch.
        Watching outlives the run (a finished scenario's memory can still be edited by hand):
        whoever starts it stops it, with :meth:`stop_watching_memory`."""
        store = self.memory_store
        if store is None or self._watcher is not None:
            return
        watcher = MemoryWatcher(store, self.emit)
        watcher.start()
        self._watcher = watcher

    def stop_watching_memory(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    # -- the source -----------------------------------------------------------------------------

    async def open(self) -> RunStart:
        """Prepare the workspace and pick the provider."""
        opts = self.options
        self.thresholds = self._asked_thresholds()  # a scenario's bad budget fails here
        prepare_workspace(opts)
        given = self.provider is not None
        provider = self.provider or make_provider(opts, self.emit)
        self.provider = provider
        if awaits_retry_sink(provider):  # a given provider shows retries too
            provider.on_retry = self.emit
        if given:  # a provider made elsewhere gets the run's API settings too
            use_api_context(provider, opts.api_context)
        if isinstance(provider, ScriptedProvider):
            provider.word_delay = self.controls.word_delay
        api = getattr(provider, "api_context", None) or ApiContext()
        return RunStart(provider=provider.name, workspace=str(opts.workspace),
                        scenario=opts.scenario.name if opts.scenario else None,
                        model=provider.model, breaks=tuple(sorted(opts.breaks)),
                        context_manager=api.manager(opts.compaction))

    async def play(self) -> None:
        if self.options.scenario is not None:
            await self._play_scenario()
            return
        agent = self._resumed_agent()
        for prompt in self.options.prompts:
            await self._turn(agent, prompt)
        if not self.options.interactive:
            return
        while (sent := await self.controls.next_prompt()) is not None:
            try:
                await self._turn(agent, sent)
            except Exception as exc:
                self.report(exc)
                self._save_worklog()
                self._unsaved = False

    async def close(self) -> None:
        """Keep what the tools did (a failed or cancelled turn saved nothing), then close the
        provider; closing must never mask the run's own outcome."""
        if self._unsaved:
            self._save_worklog()
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:
                pass

    # -- playing --------------------------------------------------------------------------------

    async def _turn(self, agent: Agent, prompt: str) -> None:
        self._unsaved = True
        await agent.run_turn(prompt)
        self._after_turn(agent)

    def new_agent(self, worklog: WorkLog | None = None) -> Agent:
        assert self.provider is not None
        source_rel = self._worklog_rel()  # a bad session name fails here, before any work
        self.agent = Agent(self.options.workspace, self.provider, thresholds=self.thresholds,
                           emit=self.emit, breaks=self.options.breaks,
                           memory=self.options.memory, gate=self.gate,
                           compaction=self.options.compaction, pinned=self.options.pinned,
                           worklog=worklog, count_tokens=self.options.count_tokens,
                           record_stages=self.options.record_stages,
                           memory_store=self.memory_store,
                           pass_env=self.options.pass_env)
        self.agent.worklog.source = source_rel
        return self.agent

    def _resumed_agent(self) -> Agent:
        """The agent for prompts: fresh, or carrying on a saved session (``--resume``)."""
        resume = self.options.resume
        # the session first: a tampered file is refused before anything (even the work log)
        # is touched
        saved = load_session(self.options.workspace, resume) if resume else None
        self._check_save_target()
        agent = self.new_agent(self._load_worklog(resume) if resume else None)
        if saved is not None:
            agent.messages, agent.turns = saved
            agent.full_history = list(agent.messages)
        return agent

    def _check_save_target(self) -> None:
        """A session path no save could replace, or one that is a link, fails now (one line),
        not after the first model call; the work log is saved by every run, so its path is
        checked whether a session was named or not."""
        name = self.options.session or self.options.resume
        if name:
            check_save_target(self.options.workspace, name)
        check_worklog_target(self.options.workspace, self.session_name)

    def _worklog_rel(self) -> str:
        path = worklog_path(self.options.workspace, self.session_name)
        return path.relative_to(self.options.workspace).as_posix()

    async def _play_scenario(self) -> None:
        """The scenario, started again from a fresh workspace whenever a seek goes back."""
        while True:
            try:
                await self._scenario_once()
                return
            except StartAgain:
                self._start_again()

    def _start_again(self) -> None:
        """Back to before the first request: the workspace generated anew, the memory store
        reopened on it, and ``rewind`` so front ends forget what they drew (the seek's
        target stays set: the run plays to it at once, and holds there)."""
        watching = self._watcher is not None
        self.stop_watching_memory()
        self._store = None
        empty_workspace(self.options.workspace)
        prepare_workspace(self.options)
        self.provider = make_provider(self.options, self.emit)  # its tool ids count anew
        self._pace_words()
        self.gate.requests = 0
        self.turns = 0
        self._unsaved = False
        self.emit(Rewind(position=self.controls.target or 0))
        if watching:
            self.watch_memory()

    async def _scenario_once(self) -> None:
        assert self.options.scenario is not None and self.provider is not None
        self._check_save_target()
        sessions = self.options.scenario.sessions
        for number, session in enumerate(sessions, start=1):
            if len(sessions) > 1:
                self.emit(SessionStart(session=number, sessions=len(sessions)))
            agent = self.new_agent()
            for turn in session.turns:
                begin = getattr(self.provider, "begin_turn", None)
                if begin:
                    begin(turn)
                self._unsaved = True
                await agent.run_turn(turn.user)
                for probe in turn.probes:
                    self.emit(check_probe(agent, probe.ask, probe.expect))
                self._after_turn(agent)

    def _after_turn(self, agent: Agent) -> None:
        self.turns += 1
        self._unsaved = False
        name = self.options.session or self.options.resume
        if name:
            save_session(self.options.workspace, name, agent.messages, agent.turns)
        save_worklog(self.options.workspace, self.session_name, agent.worklog)

    def _save_worklog(self) -> None:
        """After a failed turn: keep what the tools did, best effort."""
        if self.agent is None:
            return
        try:
            save_worklog(self.options.workspace, self.session_name, self.agent.worklog)
        except (OSError, ValueError) as exc:
            self.emit(Error(message=f"the work log could not be saved: {exc}",
                            kind="worklog_file"))

    def _load_worklog(self, name: str) -> WorkLog:
        """The resumed session's work log; an unreadable one is set aside, not fatal."""
        try:
            return load_worklog(self.options.workspace, name)
        except WorkLogError as exc:
            path = worklog_path(self.options.workspace, name)
            aside = path.with_name(path.name + ".bad")
            try:
                os.replace(path, aside)
                kept = f"; the file was kept as {aside.name}"
            except OSError:
                kept = ""
            self.emit(Error(message=f"{exc}{kept}; starting a new work log",
                            kind="worklog_file"))
            return WorkLog()
