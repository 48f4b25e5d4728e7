"""Typed events: the only way the engine talks to the UI, the headless log and JSONL.

Every source speaks these, and every front end reads them: the workbench, ``--json``,
``compare``. :class:`RunOutcome` reads how a run ended from them, one verdict for every
front end. One module per topic (:mod:`~core.events.run`, :mod:`~core.events.compaction`,
:mod:`~core.events.memory`, :mod:`~core.events.recorded`) on one base
(:mod:`~core.events.base`); import them all from here. ``Manager`` is the vocabulary of
``stage.by`` and ``run_start.context_manager``.
"""

from __future__ import annotations

from core.compact.managers import Manager
from core.events.base import (
    EVENT_TYPES,
    LOCAL_ONLY,
    Emitter,
    Event,
    EventT,
    Recorder,
    Sink,
    dumps_event,
    event_from_json,
    wire_fields,
)
from core.events.compaction import (
    ArchiveListing,
    PairViolation,
    PointerBroken,
    Stage,
    StageSnapshot,
)
from core.events.memory import (
    IndexRebuilt,
    MemoryConsolidated,
    MemoryConsolidationFailed,
    MemoryRejected,
    MemorySelected,
    MemoryWritten,
)
from core.events.outcome import RunOutcome
from core.events.recorded import (
    ReplayNotice,
    ReplayStart,
    ReplayStep,
    Rewind,
    WatchRequest,
    WatchResponse,
    WatchStart,
)
from core.events.run import (
    AssistantText,
    Error,
    ModelRequest,
    ModelResponse,
    ProbeChecked,
    Retry,
    RunEnd,
    RunStart,
    SessionStart,
    SystemPrompt,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
)

__all__ = [
    "EVENT_TYPES",
    "LOCAL_ONLY",
    "ArchiveListing",
    "AssistantText",
    "Emitter",
    "Error",
    "Event",
    "EventT",
    "IndexRebuilt",
    "Manager",
    "MemoryConsolidated",
    "MemoryConsolidationFailed",
    "MemoryRejected",
    "MemorySelected",
    "MemoryWritten",
    "ModelRequest",
    "ModelResponse",
    "PairViolation",
    "PointerBroken",
    "ProbeChecked",
    "Recorder",
    "ReplayNotice",
    "ReplayStart",
    "ReplayStep",
    "Retry",
    "Rewind",
    "RunEnd",
    "RunOutcome",
    "RunStart",
    "SessionStart",
    "Sink",
    "Stage",
    "StageSnapshot",
    "SystemPrompt",
    "ToolCall",
    "ToolResult",
    "TurnEnd",
    "TurnStart",
    "WatchRequest",
    "WatchResponse",
    "WatchStart",
    "dumps_event",
    "event_from_json",
    "wire_fields",
]
