"""One registry of providers, one function that picks the provider of a run."""

from __future__ import annotations

import pytest

from core.providers.anthropic import AnthropicProvider
from core.providers.base import BaseProvider, ModelCall
from core.providers.registry import choose_provider, make_provider, provider_names
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
