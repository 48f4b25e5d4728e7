"""Long-term memory: records chosen, written, refused, consolidated; the index rebuilt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.events.base import Event


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
