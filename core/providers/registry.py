"""The providers ctxlab knows, and the one function that decides which one a run uses.

The ``--provider`` choices come from :data:`PROVIDERS`; each entry names the module and
class (imported only when wanted: the SDK is not loaded for an offline run) and the
environment variable that makes it the default. Adding a provider is one module plus one
entry here.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.providers.base import Provider


@dataclass(frozen=True)
class ProviderEntry:
    name: str
    module: str
    cls: str
    help: str
    key_env: str | None = None  # set: the default for prompts (live runs)
    scripted: bool = False  # plays a scenario's script; refuses free prompts


PROVIDERS: dict[str, ProviderEntry] = {
    "scripted": ProviderEntry("scripted", "core.providers.scripted", "ScriptedProvider",
                              "a scenario's scripted replies, offline", scripted=True),
    "anthropic": ProviderEntry("anthropic", "core.providers.anthropic", "AnthropicProvider",
                               "the Anthropic Messages API", key_env="ANTHROPIC_API_KEY"),
}
DEFAULT_PROVIDER = "scripted"


def provider_names() -> tuple[str, ...]:
    return tuple(PROVIDERS)


def choose_provider(flag: str | None, *, scenario: bool,
                    env: Mapping[str, str] | None = None) -> str:
    """The provider a run uses: the flag if given; else, for prompts (no scenario), the
    first provider whose key is set in the environment; else the scripted one."""
    if flag:
        if flag not in PROVIDERS:
            raise ValueError(f"unknown provider {flag!r}; use {' or '.join(PROVIDERS)}")
        return flag
    env = os.environ if env is None else env
    if not scenario:
        for entry in PROVIDERS.values():
            if entry.key_env and env.get(entry.key_env):
                return entry.name
    return DEFAULT_PROVIDER


def make_provider(name: str, *, model: str | None = None, word_delay: float = 0.0,
                  on_retry: Callable[[Any], Any] | None = None) -> Provider:
    """A new provider called ``name`` (its module is imported now, not before)."""
    try:
        entry = PROVIDERS[name]
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; use {' or '.join(PROVIDERS)}") from None
    cls = getattr(importlib.import_module(entry.module), entry.cls)
    if entry.scripted:
        return cls(word_delay=word_delay)
    return cls(model=model, on_retry=on_retry)
