"""Side calls (summary, select, extract, consolidate): announced, and routed per call.

Every model call shows in the event stream as a ``model_request``/``model_response`` pair,
whatever asked for it — the summarizer, the memory subsystem or the loop — so the UI and a
JSONL reader can count what compaction and memory cost. :class:`Announced` wraps a provider
to do that in one place. :class:`RoutedSummarizer` decides per summary whether the model (or
a scenario's scripted answer) writes it, or the offline summarizer does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.compact.summarizer import ModelSummarizer, OfflineSummarizer
from core.events import Event, ModelRequest, ModelResponse
from core.measure import estimate_tokens, json_chars
from core.providers.base import ModelCall, ModelReply, Provider, TextSink


class Announced:
    """A provider that emits the contract's request/response events around each call."""

    def __init__(self, inner: Provider, emit: Callable[[Event], Any]) -> None:
        self.inner = inner
        self.emit = emit
        self.name = inner.name
        self.model = inner.model

    def has_script(self, purpose: str) -> bool:
        check = getattr(self.inner, "has_script", None)
        return bool(check and check(purpose))

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        chars = json_chars(call.messages)
        system = call.system or ""
        self.emit(ModelRequest(purpose=call.purpose, chars=chars,
                               est_tokens=estimate_tokens(system) + chars // 4,
                               messages=len(call.messages), system_chars=len(system)))
        reply = await self.inner.complete(call, on_text)
        self.emit(ModelResponse(purpose=call.purpose, stop_reason=reply.stop_reason,
                                usage=reply.usage))
        return reply


class RoutedSummarizer:
    """Ask ``route()`` for a provider at each summary; offline when it answers None.

    A scripted scenario can thus script one summary and leave the rest to the offline
    summarizer, and a live run always asks the model.
    """

    accepts_notes = True

    def __init__(self, route: Callable[[], Provider | None], max_tokens: int = 2_000) -> None:
        self.route = route
        self.max_tokens = max_tokens
        self.offline = OfflineSummarizer()

    async def summarize(self, messages: list[dict], active_request: str,
                        prepared_input: str, notes: str = "") -> str:
        provider = self.route()
        inner = self.offline if provider is None else ModelSummarizer(
            provider, max_tokens=self.max_tokens)
        return await inner.summarize(messages, active_request, prepared_input, notes=notes)
