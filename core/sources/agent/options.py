"""What a session is asked to do: the options of one run, and the provider they name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.config import Thresholds
from core.events import Event
from core.providers import registry
from core.providers.api_context import ApiContext
from core.providers.base import Provider
from core.scenarios.model import Scenario


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
    # who manages the context on ctxlab's side: the pipeline, truncation, observation
    # masking, or the API's context editing or compaction played offline
    # (core.compact.truncate.ENGINES)
    compaction: Manager = Manager.PIPELINE
    pinned: bool = True  # project rules + work log in every system prompt (off: compare lab)
    session: str | None = None
    resume: str | None = None
    interactive: bool = False  # after the prompts, wait for more (send) until finish()
    count_tokens: bool = False  # ask the API's count_tokens before each main call (online)
    record_stages: bool = False  # stage events carry their before/after (an inspector)
    api_context: ApiContext | None = None  # the API's own context management + caching
    pass_env: tuple[str, ...] = ()  # secret-named variables the tools get anyway (--pass-env)


def make_provider(options: RunOptions, emit: Callable[[Event], Any]) -> Provider:
    """The run's provider, from the registry (:mod:`core.providers.registry`)."""
    provider = registry.make_provider(options.provider, model=options.model, on_retry=emit)
    use_api_context(provider, options.api_context)
    return provider


def use_api_context(provider: Provider, api: ApiContext | None) -> None:
    """Hand the run's API context settings to a provider that supports them; asking a
    provider without server-side context management for it is a clear error."""
    if api is None:
        return
    if getattr(provider, "api_context", None) is None and api.active:
        raise ValueError(f"the {provider.name} provider has no server-side context management"
                         "; use the anthropic provider")
    if hasattr(provider, "api_context"):
        provider.api_context = api.validate()
