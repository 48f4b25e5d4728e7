"""One agent session: ctxlab's own loop, driven from outside through one object.

The workbench, ``ctxlab run --headless``, ``compare`` and the tests all drive this object,
and only this object: start, send a prompt, pause / step / resume, cancel, change the
thresholds, recover a tool result's original, end. It prepares the workspace, picks the
provider, plays each turn through an :class:`~core.sources.agent.loop.Agent`, saves the session and
its work log after every turn, and ends with exactly one ``run_end`` event — errors become
an ``error`` event and ``ok: false``, never a traceback.

A scripted scenario (or a list of prompts) is played by :meth:`AgentSession.run`; live
mode calls :meth:`AgentSession.send` once per prompt and :meth:`AgentSession.end` when
the person leaves, so several prompts are one session, not one run per prompt. The
session is an event source (:mod:`core.sources`) like any other.

Every run keeps a work log (:mod:`core.sources.agent.worklog`) beside its session — under the
``--session`` name, else ``default`` — saved after each turn (and after a failed one: what
the tools did happened), and loaded back by ``--resume``. After each scripted turn, each of
the turn's probes is checked against what the next main call would send, and reported as a
``probe`` event.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from core import sources as source
from core.config import Thresholds, scenario_thresholds
from core.events import Error, Event, RunEnd, RunStart, SessionStart, Sink
from core.memory.store import MemoryStore
from core.memory.watch import MemoryWatcher
from core.providers.api_context import ApiContext
from core.providers.base import Provider, ProviderError, awaits_retry_sink
from core.providers.scripted import ScriptedProvider
from core.scenarios.prepare import prepare_workspace
from core.sources.agent.loop import Agent
from core.sources.agent.options import RunOptions, make_provider, use_api_context
from core.sources.agent.probes import check_probe
from core.sources.agent.saved import check_save_target, load_session, save_session
from core.sources.agent.system_prompt import Section
from core.sources.agent.worklog import (
    DEFAULT_SESSION,
    WorkLog,
    WorkLogError,
    check_worklog_target,
    load_worklog,
    save_worklog,
    worklog_path,
)
from core.sources.controls import Gate


class AgentSession:
    """ctxlab's agent loop as an event source with controls (see :mod:`core.sources`)."""

    kind = "ctxlab"
    capabilities = frozenset({source.PAUSE, source.STEP, source.CANCEL, source.SEND,
                              source.THRESHOLDS})

    def __init__(self, options: RunOptions, emit: Callable[[Event], Any] | None = None,
                 gate: Gate | None = None, provider: Provider | None = None) -> None:
        self.options = options
        self._first = emit
        self._sinks: list[Sink] = []
        self.gate = gate or Gate()
        self.provider = provider
        self.agent: Agent | None = None
        self.turns = 0
        self.started = False
        self.ended = False
        self.ok = True  # False once a turn failed or was cancelled
        self._task: asyncio.Task[Any] | None = None
        self._store: MemoryStore | None = None
        self._watcher: MemoryWatcher | None = None

    # -- the event stream ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        scenario = self.options.scenario
        return scenario.name if scenario else "live"

    def subscribe(self, sink: Sink) -> None:
        """Also hand every event to ``sink`` (after the sink given at construction)."""
        self._sinks.append(sink)

    def emit(self, event: Event) -> Event:
        out = self._first(event) if self._first is not None else None
        stamped = out if isinstance(out, Event) else event  # an Emitter stamps ``t``
        for sink in list(self._sinks):
            sink(stamped)
        return stamped

    # -- settings -------------------------------------------------------------------------------

    @property
    def workspace(self) -> Path:
        return self.options.workspace

    @property
    def thresholds(self) -> Thresholds:
        """The limits in force: the running compactor's, else what a start would use."""
        if self.agent is not None:
            return self.agent.compactor.thresholds
        if self.options.thresholds is not None:
            return self.options.thresholds
        scenario = self.options.scenario
        return scenario_thresholds(scenario.thresholds, scenario.source) if scenario \
            else Thresholds()

    def set_thresholds(self, value: Thresholds) -> None:
        """New limits, from the next ``prepare()`` on (and for every later agent)."""
        self.options.thresholds = value
        if self.agent is not None:
            self.agent.compactor.thresholds = value

    @property
    def breaks(self) -> frozenset[str]:
        return self.options.breaks

    @property
    def session_name(self) -> str:
        """Where this run's session files go (``default`` when no name was given)."""
        return self.options.session or self.options.resume or DEFAULT_SESSION

    # -- controls -------------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self.gate.paused

    def pause(self) -> None:
        self.gate.pause()

    def resume(self) -> None:
        self.gate.resume()

    def step(self) -> None:
        self.gate.step()

    def set_pace(self, call_delay: float, word_delay: float) -> None:
        """Seconds before each model call, and between streamed words (scripted replies)."""
        self.gate.delay = call_delay
        self.options.word_delay = word_delay
        if isinstance(self.provider, ScriptedProvider):
            self.provider.word_delay = word_delay

    def cancel(self) -> None:
        """Stop the work in progress at its next await (``run_end`` still comes)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    # -- what the engine holds, read-only for front ends ----------------------------------------

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the list the next main call starts from."""
        return list(self.agent.messages) if self.agent is not None else []

    def sent_messages(self) -> list[dict[str, Any]]:
        """The list the last main call was sent (compacted: what the model saw)."""
        return list(self.agent.last_sent) if self.agent is not None else []

    def system_sections(self) -> list[Section]:
        """The system prompt's sections as the last main call was sent them."""
        return list(self.agent.last_system) if self.agent is not None else []

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

    # -- playing --------------------------------------------------------------------------------

    async def run(self, emit: Sink | None = None) -> bool:
        """Play the scenario (or the prompts) and end; True when everything completed."""
        if emit is not None:
            self.subscribe(emit)
        self._task = asyncio.current_task()
        ok = False
        try:
            ok = await self._attempt(self._play)
        finally:
            await self.end()
        return ok and self.ok

    async def start(self) -> bool:
        """Prepare the workspace, pick the provider, say ``run_start`` (once)."""
        if self.started:
            return True
        return await self._attempt(self._start)

    async def send(self, prompt: str) -> bool:
        """One more request in this session (live mode); True when its turn completed."""
        if self.ended:
            raise RuntimeError("the session has ended")
        self._task = asyncio.current_task()

        async def turn() -> None:
            await self._start()
            agent = self.agent or self._resumed_agent()
            await agent.run_turn(prompt)
            self._after_turn(agent)

        return await self._attempt(turn)

    async def end(self) -> None:
        """Close the provider and say ``run_end`` — once; a session that never started and
        never failed has nothing to end (a live workbench left before its first prompt)."""
        if self.ended:
            return
        self.ended = True
        await self._close()
        if self.started or not self.ok:
            self.emit(RunEnd(ok=self.ok and self.started, turns=self.turns))

    async def _attempt(self, work: Callable[[], Awaitable[None]]) -> bool:
        """Run ``work``; a failure becomes an ``error`` event (the work log is kept)."""
        try:
            await work()
            return True
        except asyncio.CancelledError:
            self._failed(Error(message="run cancelled", kind="cancelled"))
            raise
        except ProviderError as exc:
            self._failed(Error(message=str(exc).splitlines()[0] if str(exc)
                               else type(exc).__name__, kind=exc.kind))
        except (OSError, ValueError) as exc:
            self._failed(Error(message=str(exc), kind=type(exc).__name__))
        return False

    def _failed(self, error: Error) -> None:
        self.ok = False
        self.emit(error)
        self._save_worklog()

    async def _start(self) -> None:
        if self.started:
            return
        opts = self.options
        prepare_workspace(opts)
        given = self.provider is not None
        provider = self.provider or make_provider(opts, self.emit)
        self.provider = provider
        if awaits_retry_sink(provider):  # a given provider shows retries too
            provider.on_retry = self.emit
        if given:  # a provider made elsewhere gets the run's API settings too
            use_api_context(provider, opts.api_context)
        self.started = True
        api = getattr(provider, "api_context", None) or ApiContext()
        self.emit(RunStart(provider=provider.name, workspace=str(opts.workspace),
                           scenario=opts.scenario.name if opts.scenario else None,
                           model=provider.model, breaks=tuple(sorted(opts.breaks)),
                           context_manager=api.manager(opts.compaction)))

    async def _play(self) -> None:
        await self._start()
        if self.options.scenario is not None:
            await self._play_scenario()
        else:
            agent = self._resumed_agent()
            for prompt in self.options.prompts:
                await agent.run_turn(prompt)
                self._after_turn(agent)

    async def _close(self) -> None:
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:  # closing must never mask the run's own outcome
                pass

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
                await agent.run_turn(turn.user)
                for probe in turn.probes:
                    self.emit(check_probe(agent, probe.ask, probe.expect))
                self._after_turn(agent)

    def _after_turn(self, agent: Agent) -> None:
        self.turns += 1
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
