"""Side calls (summary, select, extract, consolidate) announced as events.

Every model call shows in the event stream as a ``model_request``/``model_response`` pair,
whatever asked for it — the summarizer, the memory subsystem or the loop — so the UI and a
JSONL reader can count what compaction and memory cost. :class:`Announced` wraps a provider
to do that in one place. (Which summarizer writes a summary is decided per call by
:class:`core.compact.summarizer.RoutedSummarizer`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
