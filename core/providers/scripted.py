"""The scripted provider: a scenario supplies the model's words, everything else is real.

Each main call takes the next scripted reply of the current turn (text streamed word by
word, tool calls with deterministic ids, or a scripted API error such as prompt-too-long so
reactive compaction can be shown). A history with a broken tool_use/tool_result pair (only
possible with the ``pair-protection`` break switch) is refused as the Messages API refuses
it — HTTP 400 ``invalid_request_error`` with the API's own message — so the lab's run fails
where a live one would. Side calls (summary, select, extract, consolidate) use
the turn's scripted answer when there is one; otherwise the agent routes them to the
offline implementations and never asks this provider.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.messages import api_pairing_error
from core.providers.base import (
    AuthError,
    BaseProvider,
    ContextOverflow,
    ModelCall,
    ModelReply,
    NetworkError,
    ProviderError,
    TextSink,
)
from core.scenarios.model import Reply, Turn

SCRIPTED_ERRORS: dict[str, tuple[type[ProviderError], str, int | None]] = {
    "prompt_too_long": (ContextOverflow,
                        "prompt is too long: 212000 tokens > 200000 maximum", 400),
    "request_too_large": (ContextOverflow, "request_too_large: request exceeds the limit", 413),
    "overloaded": (ProviderError, "overloaded_error: Overloaded", 529),
    "auth": (AuthError, "authentication_error: invalid x-api-key", 401),
    "network": (NetworkError, "connection error: could not reach the API", None),
}
OUT_OF_SCRIPT = "(The scenario has no more scripted replies for this request.)"


class ScriptedProvider(BaseProvider):
    name = "scripted"

    def __init__(self, model: str = "scripted", word_delay: float = 0.0) -> None:
        self.model = model
        self.word_delay = word_delay
        self._turn: Turn | None = None
        self._replies: list[Reply] = []
        self._side: dict[str, list[Any]] = {}
        self._calls = 0

    def begin_turn(self, turn: Turn) -> None:
        """Load the script for the next user request."""
        self._turn = turn
        self._replies = list(turn.replies)
        self._side = {purpose: list(answers) for purpose, answers in turn.side.items()}

    def has_script(self, purpose: str) -> bool:
        return bool(self._side.get(purpose))

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        self._calls += 1
        if call.purpose != "main":
            return self._side_answer(call.purpose)
        refusal = api_pairing_error(call.messages)
        if refusal:  # the API checks the request before any reply: the script is not used
            raise ProviderError(f"HTTP 400 invalid_request_error: {refusal}", status=400)
        if not self._replies:
            return await self._say(OUT_OF_SCRIPT, [], on_text)
        reply = self._replies.pop(0)
        if reply.error:
            cls, message, status = SCRIPTED_ERRORS[reply.error]
            error = cls(message, status=status)
            error.scripted = True  # unlike the pairing refusal above, the history is fine
            raise error
        uses = [
            {"type": "tool_use", "id": f"toolu_{self._calls:03d}_{i}", "name": name,
             "input": dict(data)}
            for i, (name, data) in enumerate(reply.tools)
        ]
        return await self._say(reply.say, uses, on_text)

    async def _say(self, text: str, uses: list[dict], on_text: TextSink | None) -> ModelReply:
        content: list[dict] = []
        if text:
            for word in _chunks(text):
                if on_text:
                    on_text(word)
                if self.word_delay:
                    await asyncio.sleep(self.word_delay)
            content.append({"type": "text", "text": text})
        content.extend(uses)
        stop = "tool_use" if uses else "end_turn"
        return ModelReply(content=content, stop_reason=stop, usage=None)

    def _side_answer(self, purpose: str) -> ModelReply:
        answers = self._side.get(purpose) or []
        if not answers:
            raise ProviderError(f"the scenario scripts no {purpose} answer for this request")
        answer = answers.pop(0)
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        return ModelReply(content=[{"type": "text", "text": text}], stop_reason="end_turn")


def _chunks(text: str) -> list[str]:
    """Split into word-sized pieces that concatenate back to ``text`` exactly."""
    pieces: list[str] = []
    current = ""
    for ch in text:
        current += ch
        if ch in " \n":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces
