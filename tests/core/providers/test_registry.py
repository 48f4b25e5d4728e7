"""One registry of providers, one function that picks the provider of a run, one that makes
the summarizer of compact and replay."""

from __future__ import annotations

import pytest

from core.compact.summarizer import ModelSummarizer, OfflineSummarizer
from core.providers.anthropic import AnthropicProvider
from core.providers.base import BaseProvider, ModelCall, ModelReply, TextSink
from core.providers.registry import (
    OFFLINE,
    PROVIDERS,
    ProviderEntry,
    ProviderUnavailable,
    choose_provider,
    close_provider,
    make_provider,
    make_summarizer,
    provider_names,
    summarizer_names,
)
from core.providers.scripted import ScriptedProvider
from tui.cli import build_parser


def test_the_flag_wins_then_a_key_for_prompts_then_the_script() -> None:
    key = {"ANTHROPIC_API_KEY": "sk-test"}
    assert choose_provider("scripted", scenario=False, env=key) == "scripted"
    assert choose_provider(None, scenario=False, env=key) == "anthropic"
    assert choose_provider(None, scenario=True, env=key) == "scripted"  # scripts the model
    assert choose_provider(None, scenario=False, env={}) == "scripted"
    with pytest.raises(ValueError, match="unknown provider"):
        choose_provider("nonsense", scenario=False, env={})


def test_providers_come_from_the_registry_with_the_base_defaults() -> None:
    assert provider_names() == ("scripted", "anthropic")
    scripted = make_provider("scripted", word_delay=0.5)
    assert isinstance(scripted, ScriptedProvider) and scripted.word_delay == 0.5
    live = make_provider("anthropic", model="claude-test")
    assert isinstance(live, AnthropicProvider) and live.model == "claude-test"
    for provider in (scripted, live):
        assert isinstance(provider, BaseProvider)
    choices = build_parser().parse_args(["run", "--headless", "--provider", "anthropic"])
    assert choices.provider == "anthropic"


async def _defaults(provider: BaseProvider) -> tuple[bool, int | None]:
    await provider.aclose()
    provider.begin_turn(None)
    return provider.has_script("summary"), await provider.count_tokens("", [], [])


def test_a_minimal_provider_inherits_a_no_op_for_every_optional_method() -> None:
    import asyncio

    class Echo(BaseProvider):
        name = "echo"

        async def complete(self, call: ModelCall, on_text=None):  # type: ignore[override]
            raise NotImplementedError

    assert asyncio.run(_defaults(Echo())) == (False, None)


class Plain(BaseProvider):
    """A provider with no options at all: the registry leaves what it is not given out."""

    name = "plain"
    closed = False

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        return ModelReply(content=[{"type": "text", "text": "the state so far"}])

    async def aclose(self) -> None:
        self.closed = True


class Broken(BaseProvider):
    name = "broken"

    def __init__(self) -> None:
        raise RuntimeError("no key set")


def _register(monkeypatch, name: str, cls: str) -> None:
    monkeypatch.setitem(PROVIDERS, name, ProviderEntry(name, __name__, cls, "a test provider"))


def test_offline_and_scripted_summaries_need_no_provider() -> None:
    for name in (OFFLINE, "scripted"):
        summarizer, provider = make_summarizer(name, model="m", max_tokens=10)
        assert isinstance(summarizer, OfflineSummarizer) and provider is None
    assert summarizer_names() == ("offline", "anthropic")
    args = build_parser().parse_args(["replay", "x.jsonl", "--provider", "anthropic"])
    assert args.provider == "anthropic"


def test_a_model_summary_goes_through_the_registrys_provider() -> None:
    events: list = []
    summarizer, provider = make_summarizer("anthropic", model="claude-test", emit=events.append,
                                           on_retry=events.append, max_tokens=123)
    assert isinstance(summarizer, ModelSummarizer) and summarizer.provider is provider
    assert isinstance(provider, AnthropicProvider) and provider.model == "claude-test"
    assert provider.on_retry == events.append and summarizer.max_tokens == 123
    assert summarizer.emit == events.append


def test_any_registered_provider_summarizes_and_is_closed_after(monkeypatch) -> None:
    import asyncio

    _register(monkeypatch, "plain", "Plain")
    events: list = []
    summarizer, provider = make_summarizer("plain", emit=events.append)
    assert isinstance(provider, Plain)
    text = asyncio.run(summarizer.summarize([], "", "[]"))
    assert text == "the state so far"
    assert [e.type for e in events] == ["model_request", "model_response"]
    asyncio.run(close_provider(provider))
    assert provider.closed
    asyncio.run(close_provider(None))  # no provider, or one without aclose: nothing to do
    asyncio.run(close_provider(object()))


def test_a_provider_that_cannot_be_made_names_the_flag(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "core.providers.anthropic", None)
    with pytest.raises(ProviderUnavailable, match=r"^--provider anthropic is not available: "):
        make_summarizer("anthropic")
    _register(monkeypatch, "broken", "Broken")
    with pytest.raises(ProviderUnavailable, match=r"^--provider broken: no key set$"):
        make_summarizer("broken")
    with pytest.raises(ProviderUnavailable, match="unknown provider 'nonsense'"):
        make_summarizer("nonsense")


def test_a_toy_provider_plays_a_run_from_one_registry_entry(monkeypatch, tmp_path) -> None:
    """docs/EXTENDING.md, "Adding a provider": one entry in PROVIDERS, and ``--provider
    plain`` plays ctxlab's own loop on it, as any provider does."""
    import asyncio

    from core.events import AssistantText, Recorder, RunStart
    from core.sources.agent.session import AgentSession, RunOptions

    _register(monkeypatch, "plain", "Plain")
    recorder = Recorder()
    session = AgentSession(RunOptions(workspace=tmp_path, prompts=["where are we?"],
                                      provider="plain", memory=False), recorder)
    assert asyncio.run(session.run())
    assert recorder.of(RunStart)[0].provider == "plain"
    assert recorder.of(AssistantText) == []  # a provider that streams nothing still answers
    assert recorder.events[-1].ok and recorder.events[-1].turns == 1
    assert isinstance(session.provider, Plain) and session.provider.closed  # closed at the end
