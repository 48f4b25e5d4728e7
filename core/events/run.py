"""Runs, turns, model calls, tools, probes and errors: what one run of any source says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.compact.managers import Manager, joined, manager_names
from core.events.base import LOCAL_ONLY, Event
from core.usage import Usage

# -- run and turn ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunStart(Event):
    type: ClassVar[str] = "run_start"
    provider: str
    workspace: str
    scenario: str | None = None
    model: str | None = None
    breaks: tuple[str, ...] = ()
    # who manages the context (core.compact.managers), several joined by "+"
    context_manager: str = Manager.PIPELINE.value

    def __post_init__(self) -> None:
        # an older log's spellings ("s08") read as today's names
        object.__setattr__(self, "context_manager", joined([self.context_manager]))

    @property
    def managers(self) -> tuple[str, ...]:
        """Each manager of ``context_manager``, in order (a name this version does not
        know kept as it is)."""
        return manager_names(self.context_manager)


@dataclass(frozen=True, kw_only=True)
class SessionStart(Event):
    """A scenario with several sessions starts one: a fresh conversation, same workspace.

    Emitted only by scenarios of more than one session, before the session's first
    ``turn_start``; a UI draws a divider there (memory is what crosses it).
    """

    type: ClassVar[str] = "session_start"
    session: int  # 1-based
    sessions: int


@dataclass(frozen=True, kw_only=True)
class TurnStart(Event):
    type: ClassVar[str] = "turn_start"
    request: str


@dataclass(frozen=True, kw_only=True)
class TurnEnd(Event):
    type: ClassVar[str] = "turn_end"
    chars: int


@dataclass(frozen=True, kw_only=True)
class RunEnd(Event):
    type: ClassVar[str] = "run_end"
    ok: bool
    turns: int


# -- model calls ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelRequest(Event):
    type: ClassVar[str] = "model_request"
    purpose: str
    chars: int
    est_tokens: int
    messages: int
    system_chars: int = 0
    counted_tokens: int | None = None  # the API's count_tokens, when asked for (online only)
    # main calls: the prompt cache's share as ctxlab estimates it (tokens read back from the
    # cache, and written to it again), from its own breakpoints; the API's real figures
    # follow in model_response usage
    cache_read_est: int | None = None
    cache_write_est: int | None = None
    # main calls: chars by category (core.compact.breakdown) — the message categories add
    # up to ``chars``; the system prompt's and the tool definitions' are sent besides
    breakdown: dict[str, Any] = field(default_factory=dict)
    # in-process only: the message list itself (what the model sees, for a viewer) and each
    # message's JSON chars, as the pipeline measured them
    sent: tuple[dict[str, Any], ...] | None = field(default=None, repr=False, compare=False,
                                                    metadata=LOCAL_ONLY)
    sent_sizes: tuple[int, ...] = field(default=(), repr=False, compare=False,
                                        metadata=LOCAL_ONLY)


@dataclass(frozen=True, kw_only=True)
class ModelResponse(Event):
    """A model call was answered, with the API's ``usage`` as it came.

    ``context_tokens`` is what filled the context window, read from ``usage`` once here (by
    :class:`~core.usage.Usage`) so that every source, the UI and a ``--json`` script state
    the same figure; it is filled in when not given, so a log written before the field
    existed reads back with it. :attr:`tokens` is the whole typed reading.
    """

    type: ClassVar[str] = "model_response"
    purpose: str
    stop_reason: str | None
    usage: dict[str, Any] | None = None
    context_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.context_tokens is None and self.tokens is not None:
            object.__setattr__(self, "context_tokens", self.tokens.context_tokens)

    @property
    def tokens(self) -> Usage | None:
        """The call's tokens by kind (None when no API answered)."""
        return Usage.from_api(self.usage)


@dataclass(frozen=True, kw_only=True)
class AssistantText(Event):
    """A piece of streamed assistant text (``delta``), in arrival order."""

    type: ClassVar[str] = "assistant_text"
    delta: str


@dataclass(frozen=True, kw_only=True)
class Retry(Event):
    """The SDK is retrying a call (429, 5xx, overloaded)."""

    type: ClassVar[str] = "retry"
    purpose: str
    attempt: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class SystemPrompt(Event):
    type: ClassVar[str] = "system_prompt"
    sections: tuple[dict[str, Any], ...]
    # in-process only: each section's text, in the order of ``sections`` (for a viewer)
    texts: tuple[str, ...] = field(default=(), repr=False, compare=False, metadata=LOCAL_ONLY)


# -- tools ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ToolCall(Event):
    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    chars: int
    is_error: bool = False




# -- scenario probes ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ProbeChecked(Event):
    """After a scenario turn: could the model still answer ``ask``?

    ``answerable`` is whether ``expect`` can be found in what the next main call would
    send (system prompt + messages); ``found_in`` names where: system-prompt section names
    (e.g. ``worklog``, ``rules:CTXLAB.md``) and/or ``messages``.
    """

    type: ClassVar[str] = "probe"
    ask: str
    expect: str
    answerable: bool
    found_in: tuple[str, ...] = ()




# -- errors ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Error(Event):
    type: ClassVar[str] = "error"
    message: str
    kind: str
