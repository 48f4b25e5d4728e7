"""The providers ctxlab knows, the one function that decides which one a run uses, and the
one that makes the summarizer of a command that only summarises (compact, replay).

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
from typing import TYPE_CHECKING, Any

from core.providers.base import Provider, awaits_retry_sink

if TYPE_CHECKING:
    from core.compact.summarizer import Summarizer


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
OFFLINE = "offline"  # replay's name for the offline summarizer (a scripted provider's too)


class ProviderUnavailable(Exception):
    """The provider a summarizer needs cannot be made (its SDK missing, a bad setting); the
    message names the flag, ready for the command's one error line."""


def provider_names() -> tuple[str, ...]:
    return tuple(PROVIDERS)


def summarizer_names() -> tuple[str, ...]:
    """What ``replay --provider`` offers: the offline summarizer, then every model."""
    return (OFFLINE, *(entry.name for entry in PROVIDERS.values() if not entry.scripted))


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
    # a model not given is the provider's default; retries are reported through the slot
    # every provider has (BaseProvider.on_retry), so a provider's constructor needs neither
    provider: Provider = cls(model=model) if model is not None else cls()
    if on_retry is not None and awaits_retry_sink(provider):
        provider.on_retry = on_retry
    return provider


def make_summarizer(name: str, *, model: str | None = None,
                    emit: Callable[[Any], Any] | None = None,
                    on_retry: Callable[[Any], Any] | None = None,
                    max_tokens: int = 2_000) -> tuple[Summarizer, Provider | None]:
    """The summarizer for ``--provider name``, and the provider to close after the run.

    ``offline`` or a scripted provider: the deterministic :class:`OfflineSummarizer` and no
    provider. Otherwise a :class:`ModelSummarizer` (its calls shown through ``emit``) over
    ``make_provider(name, ...)``; close that provider on the loop that ran the summaries
    (:func:`close_provider`). A provider that cannot be made raises
    :class:`ProviderUnavailable`.
    """
    from core.compact.summarizer import ModelSummarizer, OfflineSummarizer

    entry = PROVIDERS.get(name)
    if name == OFFLINE or (entry is not None and entry.scripted):
        return OfflineSummarizer(), None
    try:
        provider = make_provider(name, model=model, on_retry=on_retry)
    except ImportError as exc:
        raise ProviderUnavailable(f"--provider {name} is not available: {exc}") from None
    except Exception as exc:  # a missing key or bad setting, reported the provider's way
        raise ProviderUnavailable(f"--provider {name}: {exc}") from None
    return ModelSummarizer(provider, emit=emit, max_tokens=max_tokens), provider


async def close_provider(provider: object) -> None:
    """Close a provider that holds a connection (``aclose``, optional); call it on the loop
    that used the provider, before that loop ends."""
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()
