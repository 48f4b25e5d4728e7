"""A run: one scenario (or a list of prompts) played through the agent, start to end.

The runner is what ``ctxlab run --headless``, ``ctxlab demo`` and the tests share. It
prepares the workspace, picks the provider, plays each session's turns through a fresh
:class:`~core.agent.Agent`, saves the session after each turn, and always ends with a
``run_end`` event — errors become an ``error`` event and ``ok: false``, never a traceback.

Every run keeps a work log (:mod:`core.worklog`) beside its session — under the
``--session`` name, else ``default`` — saved after each turn (and after a failed one: what
the tools did happened), and loaded back by ``--resume``. After each scripted turn, each of
the turn's probes is checked against what the next main call would send, and reported as a
``probe`` event.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.agent import Agent
from core.config import Thresholds, thresholds_from_mapping
from core.events import Error, Event, ProbeChecked, RunEnd, RunStart, SessionStart
from core.gate import Gate
from core.memory_hooks import seed_memory
from core.providers.base import Provider, ProviderError
from core.providers.scripted import ScriptedProvider
from core.scenarios.model import Scenario
from core.scenarios.workspaces import generate
from core.session import check_save_target, load_session, save_session
from core.worklog import (
    DEFAULT_SESSION,
    WorkLog,
    WorkLogError,
    load_worklog,
    save_worklog,
    worklog_path,
)


@dataclass
class RunOptions:
    workspace: Path
    scenario: Scenario | None = None
    prompts: list[str] = field(default_factory=list)
    provider: str = "scripted"
    model: str | None = None
    thresholds: Thresholds | None = None
    breaks: frozenset[str] = frozenset()
    memory: bool = True
    compaction: str = "s08"  # the engine: "s08" (the course's pipeline) or "truncate"
    pinned: bool = True  # project rules + work log in every system prompt (off: compare lab)
    session: str | None = None
    resume: str | None = None
    word_delay: float = 0.0
    count_tokens: bool = False  # ask the API's count_tokens before each main call (online)


def make_provider(options: RunOptions, emit: Callable[[Event], Any]) -> Provider:
    if options.provider == "scripted":
        return ScriptedProvider(word_delay=options.word_delay)
    if options.provider == "anthropic":
        from core.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model=options.model, on_retry=emit)
    raise ValueError(f"unknown provider {options.provider!r}; use scripted or anthropic")


def prepare_workspace(options: RunOptions) -> None:
    """Generate a scenario's sample files into an empty workspace, and seed its memory."""
    ws = options.workspace
    ws.mkdir(parents=True, exist_ok=True)
    scenario = options.scenario
    if scenario is None:
        return
    if not any(p for p in ws.iterdir() if p.name not in (".ctxlab",)):
        generate(scenario.workspace, ws)
        seed_memory(ws, scenario.memory)


class Runner:
    def __init__(self, options: RunOptions, emit: Callable[[Event], Any],
                 gate: Gate | None = None, provider: Provider | None = None) -> None:
        self.options = options
        self.emit = emit
        self.gate = gate or Gate()
        self.provider = provider
        self.agent: Agent | None = None
        self.turns = 0

    def thresholds(self) -> Thresholds:
        base = self.options.thresholds or Thresholds()
        scenario = self.options.scenario
        if scenario and scenario.thresholds and self.options.thresholds is None:
            return thresholds_from_mapping(scenario.thresholds, base, scenario.source)
        return base

    def new_agent(self, provider: Provider, worklog: WorkLog | None = None) -> Agent:
        source = self._worklog_rel()  # a bad session name fails here, before any work
        self.agent = Agent(self.options.workspace, provider, thresholds=self.thresholds(),
                           emit=self.emit, breaks=self.options.breaks,
                           memory=self.options.memory, gate=self.gate,
                           compaction=self.options.compaction, pinned=self.options.pinned,
                           worklog=worklog, count_tokens=self.options.count_tokens)
        self.agent.worklog.source = source
        return self.agent

    @property
    def session_name(self) -> str:
        """Where this run's session files go (``default`` when no name was given)."""
        return self.options.session or self.options.resume or DEFAULT_SESSION

    def _worklog_rel(self) -> str:
        path = worklog_path(self.options.workspace, self.session_name)
        return path.relative_to(self.options.workspace).as_posix()

    async def run(self) -> bool:
        """Play everything; True when the run ended normally."""
        opts = self.options
        ok = False
        try:
            prepare_workspace(opts)
            provider = self.provider or make_provider(opts, self.emit)
            self.provider = provider
            if getattr(provider, "on_retry", False) is None:  # a given provider shows retries too
                provider.on_retry = self.emit
            self.emit(RunStart(provider=provider.name, workspace=str(opts.workspace),
                               scenario=opts.scenario.name if opts.scenario else None,
                               model=provider.model, breaks=tuple(sorted(opts.breaks))))
            if opts.scenario is not None:
                await self._play_scenario(provider)
            else:
                await self._play_prompts(provider)
            ok = True
        except asyncio.CancelledError:
            self.emit(Error(message="run cancelled", kind="cancelled"))
            raise
        except ProviderError as exc:
            self.emit(Error(message=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                            kind=exc.kind))
        except (OSError, ValueError) as exc:
            self.emit(Error(message=str(exc), kind=type(exc).__name__))
        finally:
            if not ok:
                self._save_worklog()
            await self._close()
            self.emit(RunEnd(ok=ok, turns=self.turns))
        return ok

    async def _close(self) -> None:
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:  # closing must never mask the run's own outcome
                pass

    async def _play_scenario(self, provider: Provider) -> None:
        assert self.options.scenario is not None
        self._check_save_target()
        sessions = self.options.scenario.sessions
        for number, session in enumerate(sessions, start=1):
            if len(sessions) > 1:
                self.emit(SessionStart(session=number, sessions=len(sessions)))
            agent = self.new_agent(provider)
            for turn in session.turns:
                begin = getattr(provider, "begin_turn", None)
                if begin:
                    begin(turn)
                await agent.run_turn(turn.user)
                for probe in turn.probes:
                    self.emit(check_probe(agent, probe.ask, probe.expect))
                self._after_turn(agent)

    async def _play_prompts(self, provider: Provider) -> None:
        resume = self.options.resume
        # the session first: a tampered file is refused before anything (even the work log)
        # is touched
        saved = load_session(self.options.workspace, resume) if resume else None
        self._check_save_target()
        agent = self.new_agent(provider, self._load_worklog(resume) if resume else None)
        if saved is not None:
            agent.messages, agent.turns = saved
            agent.full_history = list(agent.messages)
        for prompt in self.options.prompts:
            await agent.run_turn(prompt)
            self._after_turn(agent)

    def _check_save_target(self) -> None:
        """A session path no save could replace fails now, not after the first model call."""
        name = self.options.session or self.options.resume
        if name:
            check_save_target(self.options.workspace, name)

    def _after_turn(self, agent: Agent) -> None:
        self.turns += 1
        name = self.options.session or self.options.resume
        if name:
            save_session(self.options.workspace, name, agent.messages, agent.turns)
        save_worklog(self.options.workspace, self.session_name, agent.worklog)

    def _save_worklog(self) -> None:
        """After a failed run: keep what the tools did, best effort."""
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


def check_probe(agent: Agent, ask: str, expect: str) -> ProbeChecked:
    """Could the model answer ``ask``? Only if ``expect`` is in what the next main call
    would send: the system prompt's sections (pinned ones re-read) or the kept messages.
    Case-insensitive; text inside messages is also matched in its JSON-escaped form."""
    needle = expect.casefold()
    found = [s.name for s in agent.system_sections()
             if s.text.strip() and needle in s.text.casefold()]
    dump = json.dumps(agent.messages, ensure_ascii=False).casefold()
    if needle in dump or json.dumps(needle, ensure_ascii=False)[1:-1] in dump:
        found.append("messages")
    return ProbeChecked(ask=ask, expect=expect, answerable=bool(found), found_in=tuple(found))
