"""A run: one scenario (or a list of prompts) played through the agent, start to end.

The runner is what ``ctxlab run --headless``, ``ctxlab demo`` and the tests share. It
prepares the workspace, picks the provider, plays each session's turns through a fresh
:class:`~core.agent.Agent`, saves the session after each turn, and always ends with a
``run_end`` event — errors become an ``error`` event and ``ok: false``, never a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.agent import Agent
from core.config import Thresholds, thresholds_from_mapping
from core.events import Error, Event, RunEnd, RunStart
from core.gate import Gate
from core.memory_hooks import seed_memory
from core.providers.base import Provider, ProviderError
from core.providers.scripted import ScriptedProvider
from core.scenarios.model import Scenario
from core.scenarios.workspaces import generate
from core.session import load_session, save_session


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
    session: str | None = None
    resume: str | None = None
    word_delay: float = 0.0


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

    def new_agent(self, provider: Provider) -> Agent:
        self.agent = Agent(self.options.workspace, provider, thresholds=self.thresholds(),
                           emit=self.emit, breaks=self.options.breaks,
                           memory=self.options.memory, gate=self.gate)
        return self.agent

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
        for session in self.options.scenario.sessions:
            agent = self.new_agent(provider)
            for turn in session.turns:
                begin = getattr(provider, "begin_turn", None)
                if begin:
                    begin(turn)
                await agent.run_turn(turn.user)
                self._after_turn(agent)

    async def _play_prompts(self, provider: Provider) -> None:
        agent = self.new_agent(provider)
        if self.options.resume:
            agent.messages, agent.turns = load_session(self.options.workspace,
                                                       self.options.resume)
            agent.full_history = list(agent.messages)
        for prompt in self.options.prompts:
            await agent.run_turn(prompt)
            self._after_turn(agent)

    def _after_turn(self, agent: Agent) -> None:
        self.turns += 1
        name = self.options.session or self.options.resume
        if name:
            save_session(self.options.workspace, name, agent.messages, agent.turns)
