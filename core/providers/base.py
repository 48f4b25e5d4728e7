"""The Provider protocol: one async call shape for every model purpose.

The agent loop, the summarizer and the memory subsystem all talk to a model through
:meth:`Provider.complete`, with a ``purpose`` (``main``, ``summary``, ``select``, ``extract``,
``consolidate``) so events and scripted scenarios can tell the calls apart. Replies are
plain dicts in Messages-API shape: the engine never holds SDK objects, so the size measure
and transcripts stay plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard


@dataclass(frozen=True)
class ModelCall:
    purpose: str
    messages: list[dict[str, Any]]
    system: str | None = None
    max_tokens: int = 8_000
    tools: list[dict[str, Any]] | None = None
    # How many leading chars of ``system`` stay the same from call to call (the work log
    # after them changes every call): the prompt-cache breakpoint goes there. None: all.
    system_stable: int | None = None


@dataclass
class ModelReply:
    content: list[dict[str, Any]]  # Messages-API blocks as plain dicts
    stop_reason: str | None = "end_turn"
    usage: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks joined and stripped (how the course reads side-call answers)."""
        return "".join(
            b.get("text", "") for b in self.content if b.get("type") == "text"
        ).strip()

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


TextSink = Callable[[str], object]  # what it returns is ignored


class Provider(Protocol):
    """Something that answers model calls (the least the engine needs; see
    :class:`BaseProvider` for the optional methods and their defaults)."""

    name: str  # "anthropic" | "scripted"
    model: str | None

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        """Answer one call; stream assistant text pieces to ``on_text`` as they arrive.

        Raises :class:`ProviderError` (or a subclass) for failures the loop must handle.
        """
        ...


class ReportsRetries(Protocol):
    """A provider that hands each retry to ``on_retry`` (:class:`BaseProvider`'s slot)."""

    on_retry: Callable[[Any], Any] | None


def awaits_retry_sink(provider: object) -> TypeGuard[ReportsRetries]:
    """Whether ``provider`` reports retries and nobody has told it where to yet."""
    return getattr(provider, "on_retry", False) is None


class BaseProvider:
    """What every provider offers, with defaults: subclass it and write ``complete``.

    The engine calls the optional methods when they are there, so a provider that does not
    script turns, count tokens, report retries or hold a connection inherits a no-op.
    """

    name: str = "base"
    model: str | None = None
    on_retry: Callable[[Any], Any] | None = None  # the session hands retries to its stream
    # The Messages API's own context management and prompt caching (core.providers.api_context),
    # on providers that talk to that API; None: the provider has none.
    api_context: Any = None

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        raise NotImplementedError

    def begin_turn(self, turn: Any) -> None:
        """A scripted scenario's next turn is about to play (only scripts care)."""

    def has_script(self, purpose: str) -> bool:
        """Whether a side call of ``purpose`` has a scripted answer (else: offline)."""
        return False

    async def count_tokens(self, system: str, messages: list[dict[str, Any]],
                           tools: list[dict[str, Any]]) -> int | None:
        """The API's own input-token count, when the provider can ask for one."""
        return None

    async def aclose(self) -> None:
        """Release connections (the session calls it once, when it ends)."""


class ProviderError(Exception):
    """A model call failed. ``kind`` drives what the loop does next; ``scripted`` says a
    scenario's script made the failure up (no API was asked), so it is never told as one."""

    kind = "api"
    scripted = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ContextOverflow(ProviderError):
    """The prompt was too long: the one error reactive compaction can fix."""

    kind = "overflow"


class AuthError(ProviderError):
    kind = "auth"


class NetworkError(ProviderError):
    kind = "network"


OVERFLOW_MARKERS = (
    "prompt_too_long",
    "prompt is too long",
    "too many tokens",
    "request_too_large",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "input is too long",
)


def is_overflow_message(text: str) -> bool:
    """Whether an error message says the prompt did not fit: the course's three spellings
    and the others servers use (``request_too_large``, ``context_length_exceeded``, …)."""
    low = text.lower()
    return any(marker in low for marker in OVERFLOW_MARKERS)
