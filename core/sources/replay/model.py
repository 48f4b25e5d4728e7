"""The neutral recording: what any importer turns a session file into.

A recording is a list of *steps* in the order the original agent lived them:

* :class:`Exchange` — one model request of the original agent: the messages it appended to
  its history since the previous request (``input``), and the assistant message it got back
  (``reply``, with the recorded ``usage`` when the file has one). When a format records the
  whole request body (Requests JSONL), ``sent`` is that body's message list.
* :class:`Compaction` — the original agent rewrote its own history (Claude Code's
  ``compact_boundary`` + ``isCompactSummary``, Codex's ``compacted``): after it, the
  original's history is just ``kept``.

Replaying needs nothing else, so every format is reduced to this and the replay source never
knows which tool wrote the file. :class:`Notice` carries what the importer had to skip or
guess, with a line number when there is one: partial imports say how much was read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compact.managers import Manager

if TYPE_CHECKING:
    from core.sources.replay.subagents import SubagentTotals

Message = dict[str, Any]


class ReplayError(ValueError):
    """A session file that cannot be replayed; the message is one line for the user."""


@dataclass(frozen=True)
class Notice:
    """Something the importer skipped or inferred (``kind`` is stable, ``message`` human)."""

    kind: str
    message: str
    line: int | None = None


@dataclass
class Exchange:
    """One request of the original agent and what came back."""

    input: list[Message]
    reply: Message | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    stop_reason: str | None = None
    sent: list[Message] | None = None  # the whole body's messages, when the format has them
    line: int | None = None  # where the reply (or request) was read
    timestamp: str | None = None


@dataclass
class Compaction:
    """The original agent compacted its own history."""

    by: Manager  # the recorded agent: claude-code, codex, or one of no known make
    trigger: str  # "auto", "manual", "rewrite" (Requests: the history was not extended)
    kept: list[Message] = field(default_factory=list)  # the original's history right after
    input: list[Message] = field(default_factory=list)  # appended just before compacting
    summary: str = ""
    pre_tokens: int | None = None
    post_tokens: int | None = None  # what the agent reported its history was right after
    line: int | None = None
    timestamp: str | None = None
    # A micro-compaction (Claude Code's ``microcompact_boundary``) keeps the history and
    # clears these tool results instead (``kept`` is then unused).
    cleared: list[str] | None = None
    # What the compaction call itself cost, when the recording holds it (a watch recording
    # of Claude Code: its summary request's usage).
    usage: dict[str, Any] | None = None

    @property
    def stage(self) -> str:
        """The stage name on the timeline (``auto_compact``, ``manual_compact``,
        ``micro_compact``…)."""
        return "micro_compact" if self.cleared is not None else f"{self.trigger}_compact"


Step = Exchange | Compaction


@dataclass(frozen=True)
class ConversationInfo:
    """One conversation of a recording that holds several (a watch recording): its id for
    ``--conversation``, how many requests it made, where it starts, and its first prompt."""

    id: str
    requests: int
    first_line: int
    label: str = ""


@dataclass
class Recording:
    """A whole imported session."""

    format: str  # "claude-code" | "codex" | "messages" | "requests"
    path: Path
    agent: Manager  # who compacted in this recording (a recorded agent)
    steps: list[Step] = field(default_factory=list)
    system: str = ""  # what the original sent as system text, when the file has it
    model: str | None = None
    window_tokens: int | None = None  # the model's context window, when the file states it
    lines_total: int = 0
    lines_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    notices: list[Notice] = field(default_factory=list)
    subagents: list[Path] = field(default_factory=list)
    subagents_read: list[SubagentTotals] = field(default_factory=list)  # their totals
    # A watch recording: every conversation found, the one replayed, and the calls that
    # belong to none (a title, a quota probe, count_tokens), which are not replayed.
    conversations: list[ConversationInfo] = field(default_factory=list)
    conversation: str | None = None
    side_calls: int = 0

    @property
    def exchanges(self) -> list[Exchange]:
        return [s for s in self.steps if isinstance(s, Exchange)]

    @property
    def compactions(self) -> list[Compaction]:
        return [s for s in self.steps if isinstance(s, Compaction)]

    def note(self, kind: str, message: str, line: int | None = None) -> None:
        self.notices.append(Notice(kind, message, line))

    def summary_line(self) -> str:
        """``read 1,498 of 1,500 lines: 312 requests, 2 compactions; skipped …``."""
        skipped = ", ".join(f"{n:,} {kind}" for kind, n in sorted(self.skipped.items()))
        text = (f"read {self.lines_read:,} of {self.lines_total:,} lines: "
                f"{len(self.exchanges):,} requests, {len(self.compactions):,} compactions")
        return text + (f"; skipped {skipped}" if skipped else "")
