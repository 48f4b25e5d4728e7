"""Before and after of every stage, captured live where possible and rebuilt from disk where not.

``stage`` events arrive synchronously from inside ``prepare()``, which works on a private
copy of the history, so the UI can never read the list *between* two stages. What it can
observe exactly is:

* the list a round of stages started from — ``runner.agent.messages`` when the round's
  first ``stage`` event arrives (the agent adopts ``prepare()``'s result only afterwards);
* the list the model was sent — ``runner.agent.messages`` (minus the reply just appended)
  at the first event after the main ``model_response``, when the agent has adopted it.

A *round* is every stage between two such adoptions (usually one ``prepare()``, plus a
reactive compact and the retry's ``prepare()`` when a call overflowed). Inside a round the
missing lists are rebuilt backwards from the exact end, from files the engine wrote:

* a stage that wrote a transcript (snip, compact_history, reactive, manual) saved the whole
  list it received: its *before* is that file, byte for byte;
* budget, micro and fit replace results by pointers and say so in the ledger: their
  *before* is their *after* with each ledgered result's original read back from its file.

Each side carries a ``source`` line saying which of these it is, and the inspector shows it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compact.archive import TRANSCRIPT_DIR, Archive, pointer_path
from core.events import Event, ModelResponse, RunEnd, Stage
from tui.i18n import t

Messages = list[dict[str, Any]]
TRANSCRIPT_STAGES = frozenset({"snip_compact", "compact_history", "reactive_compact",
                               "manual_compact"})

# Message ids of each source line (tui.locales): the text is looked up when a side is built.
SRC_LIVE = "src.live"
SRC_SENT = "src.sent"
SRC_LEDGER = "src.ledger"
SRC_MISSING = "src.missing"


@dataclass
class Round:
    """Stages between two adoptions of a new history by the agent."""

    before: Messages
    records: list[StageRecord] = field(default_factory=list)
    after: Messages | None = None
    closed: bool = False


@dataclass
class StageRecord:
    """One ``stage`` event and the round it belongs to."""

    index: int
    event: Stage
    round: Round

    @property
    def transcript(self) -> str | None:
        if self.event.stage not in TRANSCRIPT_STAGES:
            return None
        prefix = TRANSCRIPT_DIR.as_posix() + "/"
        return next((f for f in self.event.files if f.startswith(prefix)), None)


@dataclass(frozen=True)
class Side:
    messages: Messages | None
    source: str


class StageLog:
    """Fed every event (with the agent's current messages) by the UI's event sink."""

    def __init__(self) -> None:
        self.records: list[StageRecord] = []
        self.last_sent: Messages | None = None  # the list of the last successful main call
        self._open: Round | None = None
        self._closing = False

    def observe(self, event: Event, messages: Sequence[dict[str, Any]] | None) -> None:
        if self._closing and not isinstance(event, Stage):
            self._close(messages)
        if isinstance(event, Stage):
            if self._open is None:
                self._open = Round(before=list(messages or []))
            record = StageRecord(len(self.records) + 1, event, self._open)
            self._open.records.append(record)
            self.records.append(record)
        elif isinstance(event, ModelResponse) and event.purpose == "main":
            self._closing = True
        elif isinstance(event, RunEnd) and self._open is not None:
            self._open.closed = True
            self._open = None

    def _close(self, messages: Sequence[dict[str, Any]] | None) -> None:
        self._closing = False
        sent = list(messages or [])
        if sent and sent[-1].get("role") == "assistant":
            sent = sent[:-1]  # the reply the agent appended right after adopting
        self.last_sent = sent
        if self._open is None:
            return
        self._open.after = sent
        self._open.closed = True
        self._open = None


def sides(record: StageRecord, workspace: Path) -> tuple[Side, Side]:
    """``(before, after)`` of one stage, each with the honest name of its source."""
    rnd = record.round
    after = Side(rnd.after, t(SRC_SENT)) if rnd.after is not None \
        else Side(None, t(SRC_MISSING))
    for rec in reversed(rnd.records):
        before = _before(rec, after, workspace)
        if rec is record:
            return before, after
        after = before
    raise ValueError("record not in its round")


def _before(rec: StageRecord, after: Side, workspace: Path) -> Side:
    if rec is rec.round.records[0]:
        return Side(rec.round.before, t(SRC_LIVE))
    if rec.transcript:
        try:
            return Side(Archive(workspace).read_transcript(rec.transcript),
                        t("src.exact", path=rec.transcript))
        except (OSError, ValueError, LookupError) as exc:  # LookupError: a changed file
            return Side(None, t("src.unreadable", error=exc))
    if after.messages is None:
        return Side(None, t(SRC_MISSING))
    return Side(undo_ledger(after.messages, rec.event.ledger, workspace, rec.round.before),
                t(SRC_LEDGER))


def undo_ledger(after: Messages, ledger: Sequence[dict[str, Any]], workspace: Path,
                prior: Messages) -> Messages:
    """``after`` with every ledgered tool result put back as it was before the stage.

    If the round started with that result already behind a pointer to the same file (micro
    turning a budget wrapper into a placeholder), the pointer is what was there; otherwise
    the original is read from the file the ledger names.
    """
    archive = Archive(workspace)
    prior_content = {b.get("tool_use_id"): b.get("content") for b in _results(prior)}
    restore: dict[str, Any] = {}
    for entry in ledger:
        tool_use_id, where = entry.get("tool_use_id", ""), entry.get("where", "")
        if entry.get("status") == "broken" or where == "lost":
            continue
        earlier = prior_content.get(tool_use_id)
        if earlier is not None and pointer_path(earlier) == where:
            restore[tool_use_id] = earlier
            continue
        try:
            restore[tool_use_id] = archive.recover(tool_use_id, where)
        except (LookupError, OSError, ValueError):
            continue
    out: Messages = []
    for message in after:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            out.append(message)
            continue
        blocks = [
            {**b, "content": restore[b.get("tool_use_id")]}
            if isinstance(b, dict) and b.get("type") == "tool_result"
            and b.get("tool_use_id") in restore else b
            for b in content
        ]
        out.append({**message, "content": blocks})
    return out


def _results(messages: Messages) -> list[dict[str, Any]]:
    return [b for m in messages if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


# -- diff -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One message on one side of the inspector: ``kind`` is kept/removed/added/changed."""

    index: int
    message: dict[str, Any]
    kind: str


def _key(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, sort_keys=True, default=str)


def diff_rows(before: Messages, after: Messages) -> tuple[list[Row], list[Row]]:
    """Mark each message kept, removed (left), added (right) or changed (both sides).

    A replaced run of the same length is a change in place (a result swapped for a
    pointer); anything else is removal plus addition (snip's marker, a summary).
    """
    left: list[Row] = []
    right: list[Row] = []
    matcher = difflib.SequenceMatcher(None, [_key(m) for m in before],
                                      [_key(m) for m in after], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            left += [Row(i, before[i], "kept") for i in range(i1, i2)]
            right += [Row(j, after[j], "kept") for j in range(j1, j2)]
        elif op == "replace" and i2 - i1 == j2 - j1:
            left += [Row(i, before[i], "changed") for i in range(i1, i2)]
            right += [Row(j, after[j], "changed") for j in range(j1, j2)]
        else:
            left += [Row(i, before[i], "removed") for i in range(i1, i2)]
            right += [Row(j, after[j], "added") for j in range(j1, j2)]
    return left, right


def changed_blocks(old: dict[str, Any], new: dict[str, Any]) -> set[str]:
    """tool_use ids whose result content differs between two versions of a message."""
    was = {b.get("tool_use_id"): b.get("content") for b in _results([old])}
    return {b.get("tool_use_id") for b in _results([new])
            if b.get("tool_use_id") in was and was[b.get("tool_use_id")] != b.get("content")}
