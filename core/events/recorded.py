"""Another agent's context: a replayed recording beside ctxlab, and a watched client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from core.events.base import Event
from core.usage import context_tokens

# -- replay ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ReplayStart(Event):
    """A recorded session is about to be replayed (``ctxlab replay``): what was read, the
    session's chars-per-token ratio and the unit the context limit was given in."""

    type: ClassVar[str] = "replay_start"
    format: str
    path: str
    agent: str
    requests: int
    compactions: int
    lines_read: int
    lines_total: int
    skipped: dict[str, Any]
    subagents: tuple[str, ...] = ()
    # one object per subagent transcript: path, agent_type, description, tool_use_id,
    # spawn_depth, requests, compactions, input_tokens, output_tokens, error
    subagent_totals: tuple[dict[str, Any], ...] = ()
    chars_per_token: float
    ratio_source: str  # "usage" (measured from the recording) or "estimate"
    # the ratio fit's intercept: tokens every request carried that the recording does not
    # show (the system prompt and tool definitions); None when not measured
    overhead_tokens: int | None = None
    unit: str  # "chars" or "tokens": how the context limit was given (or scaled from)
    context_limit: int  # in chars, as the pipeline applies it
    context_limit_tokens: int | None = None
    # How ctxlab's side got its limits: "window" (scaled to the recorded model's context
    # window), "tokens" (to --context-limit-tokens), "course" or "given"; None in older logs.
    limits: str | None = None
    max_messages: int | None = None  # the message-count rule in force
    # A watch recording: the conversation replayed, every conversation found ({id,
    # requests, first_line, label}), and the side calls kept apart.
    conversation: str | None = None
    conversations: tuple[dict[str, Any], ...] = ()
    side_calls: int = 0

    def limits_line(self) -> str:
        """ctxlab's limits in words (the headless log, the Replay panel); an older log,
        which does not say how they were reached, gives the char limit alone."""
        sizes = f"{self.context_limit:,} chars" + (
            f", {self.max_messages:,} messages" if self.max_messages is not None else "")
        tokens = f"{self.context_limit_tokens:,}" if self.context_limit_tokens else "?"
        said = {"window": f"{sizes}, scaled to the model's {tokens}-token window "
                          "(--course-limits: the course's)",
                "tokens": f"{sizes}, scaled to --context-limit-tokens {tokens}",
                "course": f"{sizes}: the course's limits (--course-limits)",
                "given": f"{sizes}, as given"}
        return said.get(self.limits or "", sizes)


@dataclass(frozen=True, kw_only=True)
class ReplayNotice(Event):
    """Something the importer skipped or inferred (a malformed line, a broken chain…)."""

    type: ClassVar[str] = "replay_notice"
    kind: str
    message: str
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class ReplayStep(Event):
    """One recorded request replayed: the original's history beside ctxlab's."""

    type: ClassVar[str] = "replay_step"
    index: int
    total: int
    original_chars: int
    original_messages: int
    original_tokens: int | None = None  # input + cache creation + cache read, as recorded
    categories: dict[str, Any]  # the older view of ``breakdown``, for scripts that read it
    ctxlab_chars: int
    ctxlab_messages: int
    timestamp: str | None = None
    # the original history's chars by category, as model_request.breakdown has ctxlab's
    breakdown: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Rewind(Event):
    """A source went back (a replay's seek): what follows is the stream again from just
    after ``run_start`` up to ``position`` (requests replayed); a front end forgets what it
    drew since ``run_start`` and draws it anew."""

    type: ClassVar[str] = "rewind"
    position: int




# -- watch (a proxied client) ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WatchStart(Event):
    """``ctxlab watch`` listens: point a client's ``ANTHROPIC_BASE_URL`` at ``listen``."""

    type: ClassVar[str] = "watch_start"
    listen: str
    upstream: str
    recording: str


@dataclass(frozen=True, kw_only=True)
class WatchRequest(Event):
    """A watched client sent a request; its measure, and how it differs from the one before.

    ``conversation`` groups requests by system prompt and first message (``None`` for a
    body that is not a Messages request); ``appended`` / ``removed`` / ``rewritten`` count
    messages against the previous request of the same conversation.
    """

    type: ClassVar[str] = "watch_request"
    id: int
    method: str
    path: str
    time: str
    model: str | None = None
    purpose: str = "other"
    stream: bool = False
    conversation: str | None = None
    messages: int = 0
    chars: int = 0
    est_tokens: int = 0
    body_bytes: int = 0
    categories: dict[str, Any] = field(default_factory=dict)  # the older view of breakdown
    appended: int = 0
    removed: int = 0
    rewritten: int = 0
    breakdown: dict[str, Any] = field(default_factory=dict)  # as in model_request
    api: str | None = None  # "messages", "responses", "responses.compact", "chat.completions"
    encrypted_chars: int = 0  # encrypted reasoning and compaction content in the history


@dataclass(frozen=True, kw_only=True)
class WatchResponse(Event):
    """The answer to watched request ``id``, as the client received it.

    ``error`` says what went wrong on the way (the upstream unreachable or timed out, a
    stream cut, the client hanging up, an API error body); ``status`` is what the client got.
    """

    type: ClassVar[str] = "watch_response"
    id: int
    status: int | None
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    duration_ms: float = 0.0
    ttfb_ms: float | None = None
    error: str | None = None
    context_tokens: int | None = None  # read from usage, as in model_response
    api: str | None = None  # as in watch_request
    api_usage: dict[str, Any] | None = None  # an OpenAI answer's usage as sent

    def __post_init__(self) -> None:
        if self.context_tokens is None:
            object.__setattr__(self, "context_tokens", context_tokens(self.usage))
