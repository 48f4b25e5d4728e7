"""The event base: one frozen dataclass per event type, its JSON, and the emitter.

Every event is a frozen dataclass with a class-level ``type`` (the contract's name) and a
``t`` field (seconds since the run started) that the :class:`Emitter` stamps. ``to_json``
turns one into the plain object the ``--json`` modes print, so the UI and a script see the
very same stream; :func:`event_from_json` reads one back. Each event type registers itself
in :data:`EVENT_TYPES` by subclassing :class:`Event`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

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
