"""Before and after of every stage, as the engine recorded them, and their diff.

A ``stage`` event of a session started with ``record_stages`` carries a
:class:`~core.events.StageSnapshot`: the list the stage received and the list it produced,
copied by the stage itself. The inspector shows exactly those — never a list read later
from the agent, never a rebuild. An event without a snapshot (another source, or a run
that did not record) says so instead of guessing.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.events import Stage
from tui.i18n import t

Messages = list[dict[str, Any]]


@dataclass
class StageRecord:
    """One ``stage`` event and its place (1-based) in the timeline."""

    index: int
    event: Stage

    @property
    def transcript(self) -> str | None:
        """The transcript the stage saved, as the archive recorded it (None: it saved none)."""
        return next((str(record["path"]) for record in self.event.archived
                     if record.get("kind") == "transcript"), None)


@dataclass(frozen=True)
class Side:
    messages: Messages | None
    source: str
    sizes: Sequence[int] = ()  # each message's chars, as the stage measured them


def sides(record: StageRecord) -> tuple[Side, Side]:
    """``(before, after)`` of one stage, each with the honest name of its source."""
    snapshot = record.event.snapshot
    if snapshot is None:
        missing = Side(None, t("src.missing"))
        return missing, missing
    return (Side(snapshot.before, t("src.before"), snapshot.before_sizes),
            Side(snapshot.after, t("src.after"), snapshot.after_sizes))


# -- diff -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One message on one side of the inspector: ``kind`` is kept/removed/added/changed;
    ``chars`` its size as the stage measured it (None: not measured)."""

    index: int
    message: dict[str, Any]
    kind: str
    chars: int | None = None


def side_rows(side: Side, kind: str = "kept") -> list[Row]:
    """Every message of one side as a row of ``kind``, with its measured size."""
    return [Row(i, m, kind, _size(side.sizes, i)) for i, m in enumerate(side.messages or [])]


def _size(sizes: Sequence[int], index: int) -> int | None:
    return sizes[index] if index < len(sizes) else None


def _key(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, sort_keys=True, default=str)


def diff_rows(before: Side, after: Side) -> tuple[list[Row], list[Row]]:
    """Mark each message kept, removed (left), added (right) or changed (both sides).

    A replaced run of the same length is a change in place (a result swapped for a
    pointer); anything else is removal plus addition (snip's marker, a summary).
    """
    old, new = before.messages or [], after.messages or []
    left: list[Row] = []
    right: list[Row] = []

    def rows(side: Side, start: int, end: int, kind: str) -> list[Row]:
        messages = side.messages or []
        return [Row(i, messages[i], kind, _size(side.sizes, i)) for i in range(start, end)]

    matcher = difflib.SequenceMatcher(None, [_key(m) for m in old], [_key(m) for m in new],
                                      autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            left += rows(before, i1, i2, "kept")
            right += rows(after, j1, j2, "kept")
        elif op == "replace" and i2 - i1 == j2 - j1:
            left += rows(before, i1, i2, "changed")
            right += rows(after, j1, j2, "changed")
        else:
            left += rows(before, i1, i2, "removed")
            right += rows(after, j1, j2, "added")
    return left, right


FOLD_AT = 4  # runs of unchanged messages longer than this are folded


def fold(rows: list[Row]) -> list[Row | int]:
    """Rows, with long runs of ``kept`` rows replaced by their count (the inspector shows
    the count as one line, the Markdown export as one paragraph)."""
    out: list[Row | int] = []
    run: list[Row] = []

    def flush() -> None:
        if len(run) > FOLD_AT:
            out.extend([run[0], len(run) - 2, run[-1]])
        else:
            out.extend(run)
        run.clear()

    for row in rows:
        if row.kind == "kept":
            run.append(row)
            continue
        flush()
        out.append(row)
    flush()
    return out
