"""What every stage needs (thresholds, archive, emitter) and how a stage reports itself.

A stage works in a :class:`StageRun`, opened on the measured history for the stage's row of
the table (:mod:`core.compact.stages`): it notes the files it wrote, the results it touched
and its ledger entries, and ``finish`` emits one ``stage`` event — only when the stage
changed something, as the contract asks. The event's name and ``by`` are the row's, so a
stage never spells its own name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Protocol

from core.archive.listing import archive_records
from core.archive.store import Archive
from core.compact.managers import Manager
from core.config import Thresholds
from core.events import Event, PointerBroken, Stage, StageSnapshot
from core.measure import CHARS_PER_TOKEN, Measured
from core.messages import Violation, validate_pairs


def _discard(event: Event) -> Any:
    return event


@dataclass
class CompactContext:
    """Shared state of one workspace's compaction."""

    archive: Archive
    thresholds: Thresholds = field(default_factory=Thresholds)
    emit: Callable[[Event], Any] = _discard
    breaks: frozenset[str] = frozenset()
    # Teaching lab: the stage that first produced each API violation, keyed by
    # (kind, tool_use_id). Filled only while a switch is on, so the default path pays nothing.
    violation_origin: dict[tuple[str, str], str] = field(default_factory=dict)
    # Attach each stage's before and after lists to its event (a front end's inspector).
    snapshots: bool = False

    def broken(self, switch: str) -> bool:
        """Is this protection deliberately switched off (teaching lab)?"""
        return switch in self.breaks

    def note_violations(self, stage: str, messages: list[dict[str, Any]]) -> None:
        """Remember which stage a new violation first appeared after (for ``violation``)."""
        for v in validate_pairs(messages):
            self.violation_origin.setdefault((v.kind, v.tool_use_id), stage)

    def violation_stage(self, violation: Violation) -> str | None:
        return self.violation_origin.get((violation.kind, violation.tool_use_id))


class StageRow(Protocol):
    """What a run needs of its row in the stage table: the stage's name and whose it is."""

    @property
    def name(self) -> str: ...

    @property
    def manager(self) -> Manager: ...


@dataclass
class StageRun:
    """The record of one stage's work on one history."""

    row: StageRow
    ctx: CompactContext
    history: Measured
    before_chars: int = 0
    before_messages: int = 0
    files: list[str] = field(default_factory=list)
    tool_use_ids: list[str] = field(default_factory=list)
    ledger: list[dict[str, Any]] = field(default_factory=list)
    changed: bool = False
    refusal: str | None = None  # reactive_compact: the error that set it off…
    refusal_scripted: bool = False  # …made up by a scenario's script, not said by an API
    _seen: set[str] = field(default_factory=set, repr=False)  # keeps wrote/took linear
    _before: list[dict[str, Any]] | None = field(default=None, repr=False)
    _before_sizes: list[int] = field(default_factory=list, repr=False)
    _prefix: list[Any] = field(default_factory=list, repr=False)  # messages, by identity

    def __post_init__(self) -> None:
        self.ctx.archive.open_stage()  # closed by the flush in finish()
        self.before_chars = self.history.chars
        self.before_messages = len(self.history)
        self._prefix = list(self.history.messages)  # stages replace, never mutate
        if self.ctx.snapshots:
            self._before = list(self.history.messages)
            self._before_sizes = list(self.history.sizes)

    @property
    def name(self) -> str:
        return self.row.name

    def cache_cost(self) -> tuple[int | None, int | None]:
        """The first message this stage changed and the tokens from there to the end: the
        prompt cache holds the prefix before it, the rest must be written again."""
        before, after = self._prefix, self.history.messages
        same = list(map(is_, before, after))  # one C loop: histories run to thousands
        first = same.index(False) if False in same else len(same)
        if first >= len(after):
            return (first, 0) if len(after) != len(before) else (None, None)
        return first, -(-self.history.chars_from(first) // CHARS_PER_TOKEN)

    def wrote(self, path: str) -> None:
        if path not in self._seen:
            self._seen.add(path)
            self.files.append(path)

    def took(self, tool_use_id: str, chars: int, where: str, **extra: Any) -> None:
        """Ledger: ``chars`` of this result left the context; the original is at ``where``."""
        self.ledger.append(self.ctx.archive.record(tool_use_id, self.name, chars, where, **extra))
        if tool_use_id not in self._seen:
            self._seen.add(tool_use_id)
            self.tool_use_ids.append(tool_use_id)
        self.changed = True

    def broken_pointer(self, tool_use_id: str, path: str) -> None:
        self.ctx.emit(PointerBroken(tool_use_id=tool_use_id, path=path,
                                    reason="the file this pointer names is missing or changed"))
        self.ledger.append(self.ctx.archive.record(tool_use_id, self.name, 0, path,
                                                   status="broken"))

    def abandon(self) -> None:
        """The stage failed before its flush: the folders it checked are trusted no longer
        (a tool may run next and swap one for a link)."""
        self.ctx.archive.end_stage()

    def finish(self) -> Stage | None:
        self.ctx.archive.flush()
        if not self.changed and self.history.chars == self.before_chars and \
                len(self.history) == self.before_messages:
            return None
        if self.ctx.breaks:
            self.ctx.note_violations(self.name, self.history.messages)
        first, rewrite = self.cache_cost()
        event = Stage(
            stage=self.name,
            before_chars=self.before_chars,
            after_chars=self.history.chars,
            before_messages=self.before_messages,
            after_messages=len(self.history),
            files=tuple(self.files),
            tool_use_ids=tuple(self.tool_use_ids),
            ledger=tuple(self.ledger),
            by=self.row.manager,
            first_changed=first,
            rewrite_tokens=rewrite,
            archived=archive_records(self.ctx.archive, self.files),
            refusal=self.refusal,
            refusal_scripted=self.refusal_scripted,
            snapshot=StageSnapshot(self._before, list(self.history.messages),
                                   self._before_sizes, list(self.history.sizes))
            if self._before is not None else None,
        )
        self.ctx.emit(event)
        return event


async def finish_after(run: StageRun, work: Awaitable[StageRun]) -> StageRun:
    """Await a stage's work (a summary call, say), then finish it; abandoned if it fails."""
    try:
        done = await work
    except BaseException:
        run.abandon()
        raise
    done.finish()
    return done
