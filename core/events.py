"""Typed events: the only way the engine talks to the UI, the headless log and JSONL.

Every event is a frozen dataclass with a class-level ``type`` (the contract's name) and a
``t`` field (seconds since the run started) that the :class:`Emitter` stamps. ``to_json``
turns one into the plain object the ``--json`` modes print, so the UI and a script see the
very same stream.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from core.compact.managers import Manager as Manager  # the vocabulary of stage.by
from core.compact.managers import joined, manager_names, read_by
from core.usage import Usage, context_tokens

EVENT_TYPES: dict[str, type[Event]] = {}
# Field metadata of data a front end in the same process may use but the wire never carries.
LOCAL_ONLY = {"wire": False}


def wire_fields(cls: type[Event] | Event) -> list[dataclasses.Field[Any]]:
    """The fields ``to_json`` prints (and docs/EVENTS.md documents)."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("wire", True)]


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every event; ``t`` is filled in by the emitter."""

    type: ClassVar[str] = "event"
    t: float = 0.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        EVENT_TYPES[cls.type] = cls

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        for f in wire_fields(self):
            data[f.name] = _plain(getattr(self, f.name))
        data["t"] = round(self.t, 4)
        return data


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return str(value)  # a name of a vocabulary (a StrEnum) goes out as its plain value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from its JSON object (used to replay a JSONL log)."""
    cls = EVENT_TYPES[data["type"]]
    names = {f.name for f in wire_fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


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


# -- compaction -----------------------------------------------------------------------------

@dataclass(frozen=True)
class StageSnapshot:
    """The message lists one stage received and produced, recorded by the stage itself.

    Stages never mutate a message in place (:class:`~core.measure.Measured` copies what it
    changes), so two shallow copies of the list are exact and cheap. Recorded only when a
    front end asks (``record_stages``): the inspector shows what the stage saw, not a guess.
    ``before_sizes`` and ``after_sizes`` are each message's JSON chars as the stage measured
    them, so the inspector states sizes without measuring.
    """

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    before_sizes: list[int] = field(default_factory=list)
    after_sizes: list[int] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Stage(Event):
    """A compaction stage changed something. ``ledger`` holds this stage's ledger entries.

    ``by`` says whose stage it is, in the vocabulary of :mod:`core.compact.managers`:
    ``ctxlab`` for this pipeline, and the other managers by their names (truncation, the
    Messages API's context editing or compaction, a watched client, a recorded agent in a
    replay), so one timeline can show them side by side; an older log's spelling reads as
    today's name.
    Such a stage may also say what set it off (``trigger``) and at how many tokens
    (``pre_tokens``); its summary, when there is one, is a file listed in ``files``.

    Its cache cost: ``first_changed`` is the index of the first message it changed (the
    cached prefix ends there) and ``rewrite_tokens`` the estimated tokens from that point on
    that the next call must write to the prompt cache again (``None``: not known).
    ``archived`` is the archive's own record of each of ``files`` it lists
    (:mod:`core.archive.listing`). ``snapshot`` (in-process only, never printed) holds the
    before and after lists.
    """

    type: ClassVar[str] = "stage"
    stage: str
    before_chars: int
    after_chars: int
    before_messages: int
    after_messages: int
    files: tuple[str, ...] = ()
    tool_use_ids: tuple[str, ...] = ()
    ledger: tuple[dict[str, Any], ...] = ()
    by: str = Manager.PIPELINE.value
    trigger: str | None = None  # another agent's own compaction: "auto", "manual"…
    pre_tokens: int | None = None  # …and the tokens it reported before compacting
    first_changed: int | None = None  # cache cost: first message index changed…
    rewrite_tokens: int | None = None  # …and the tokens after it to write to the cache again
    archived: tuple[dict[str, Any], ...] = ()
    snapshot: StageSnapshot | None = field(default=None, repr=False, compare=False,
                                           metadata=LOCAL_ONLY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by", read_by(self.by, self.stage))


@dataclass(frozen=True, kw_only=True)
class ArchiveListing(Event):
    """What the workspace's archive already held when this run's compaction first used it
    (a resumed session, a scenario run again in the same workspace): one record per file its
    manifest lists, as ``stage.archived`` has them. Emitted once per compactor, before its
    first stage, and only when there is something to list."""

    type: ClassVar[str] = "archive_listing"
    files: tuple[dict[str, Any], ...]


@dataclass(frozen=True, kw_only=True)
class PointerBroken(Event):
    """A pointer ctxlab wrote no longer resolves (its file was moved or deleted)."""

    type: ClassVar[str] = "pointer_broken"
    tool_use_id: str
    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class PairViolation(Event):
    """The history about to be sent breaks tool_use/tool_result pairing (a break switch did it).

    Emitted just before a main model call, once per violation the API validator reports;
    ``stage`` names the compaction stage that introduced it, when one is known.
    """

    type: ClassVar[str] = "violation"
    kind: str  # "orphan_tool_result" | "unanswered_tool_use"
    message_index: int
    tool_use_id: str
    stage: str | None = None


# -- memory ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MemorySelected(Event):
    type: ClassVar[str] = "memory_selected"
    files: tuple[str, ...]
    method: str


@dataclass(frozen=True, kw_only=True)
class MemoryWritten(Event):
    type: ClassVar[str] = "memory_written"
    file: str
    name: str
    # The JSON key "type" names the event kind, so the record's type travels as
    # "record_type" (the contract's `type` field of memory_written).
    record_type: str


@dataclass(frozen=True, kw_only=True)
class MemoryRejected(Event):
    type: ClassVar[str] = "memory_rejected"
    name: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class MemoryConsolidated(Event):
    type: ClassVar[str] = "memory_consolidated"
    before: int
    after: int
    batches: int = 1
    dropped: tuple[str, ...] = ()  # files of records no longer in the store (kept in .history)


@dataclass(frozen=True, kw_only=True)
class MemoryConsolidationFailed(Event):
    type: ClassVar[str] = "memory_consolidation_failed"
    reason: str


@dataclass(frozen=True, kw_only=True)
class IndexRebuilt(Event):
    type: ClassVar[str] = "index_rebuilt"
    trigger: str
    records: int
    invalid: int
    changed: tuple[str, ...] = ()


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
    chars_per_token: float
    ratio_source: str  # "usage" (measured from the recording) or "estimate"
    unit: str  # "chars" or "tokens": how the context limit was given
    context_limit: int  # in chars, as the pipeline applies it
    context_limit_tokens: int | None = None


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

    def __post_init__(self) -> None:
        if self.context_tokens is None:
            object.__setattr__(self, "context_tokens", context_tokens(self.usage))


# -- errors ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Error(Event):
    type: ClassVar[str] = "error"
    message: str
    kind: str


# -- emitting -------------------------------------------------------------------------------

EventT = TypeVar("EventT", bound=Event)
# A sink's return value is ignored (an Emitter, which returns the stamped event, is a sink).
Sink = Callable[[Event], object]


@dataclass
class Emitter:
    """Stamps ``t`` on events and hands them to every sink, in order.

    Sinks run synchronously in the emitting thread; a UI sink must hop threads itself
    (Textual's ``post_message`` is thread-safe).
    """

    sinks: list[Sink] = field(default_factory=list)
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = self.clock()

    def __call__(self, event: EventT) -> EventT:
        stamped = dataclasses.replace(event, t=self.clock() - self.start)
        for sink in list(self.sinks):
            sink(stamped)
        return stamped

    def add(self, sink: Sink) -> None:
        self.sinks.append(sink)


class Recorder:
    """A sink that keeps every event; handy in tests and for ``--json`` summaries."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def dumps_event(event: Event) -> str:
    return json.dumps(event.to_json(), ensure_ascii=False)
