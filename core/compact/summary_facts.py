"""The offline summary as facts: parsed back from text, folded, rendered, always bounded.

A history compacted twice holds an earlier ``[Compacted]`` message. Treating that message as
ordinary user text nests the old summary, JSON-escaped, inside the new one — a summary of a
summary of a summary, each level adding backslashes, growing with every compaction. Instead
the earlier summary is parsed back into its sections and its facts are merged with the new
ones, then every section is capped (items and characters), so the ``N``-th summary is no
longer than the first few and reads the same. Text is cut at a word boundary, never inside a
word. The rendered layout (``Key: value`` lines, bulleted lists) is also what
:func:`parse_summary` reads back.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

SUMMARY_LABELS = ("Compacted", "Reactive compact")
SUMMARY_PREFIX = "\n\nCurrent user request:\n"
SUMMARY_FIELD = "Conversation summary (reference only):\n"
TRANSCRIPT_FIELD = "\n\nFull transcript: "
ELLIPSIS = "…"

GOAL_CHARS = 500
ITEM_CHARS = 300
COMMAND_CHARS = 200
NOTE_CHARS = 800
EARLIER_GOALS = 3
_CALL = re.compile(r"^(\d+)×(.+)$")


@dataclass
class SummaryFacts:
    """What the offline summary keeps; lists are oldest first, de-duplicated on render."""

    goal: str = ""
    earlier_goals: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    commands: list[str] = field(default_factory=list)
    last_note: str = ""
    summarised: int = 0
    notes: str = ""
    earlier_text: str = ""  # an earlier summary in another format (a model's prose)

    def fold(self, earlier: SummaryFacts) -> None:
        """Take in an earlier summary's facts; this summary's own facts come after them."""
        goals = earlier.earlier_goals + ([earlier.goal] if earlier.goal else [])
        self.earlier_goals = goals + self.earlier_goals
        self.constraints = earlier.constraints + self.constraints
        self.files = earlier.files + self.files
        self.calls.update(earlier.calls)
        self.commands = earlier.commands + self.commands
        self.last_note = self.last_note or earlier.last_note
        self.summarised += earlier.summarised
        self.notes = self.notes or earlier.notes
        self.earlier_text = self.earlier_text or earlier.earlier_text


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` chars, cut after a whole word (then ``…``).

    Text without spaces (a path, CJK prose) is cut between characters: there is no word to
    keep whole.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space >= limit // 2 and flat[len(cut)] != " ":
        cut = cut[:space]
    return cut.rstrip(" ,;:") + ELLIPSIS


def is_summary_message(message: dict) -> bool:
    """Is this one of ctxlab's summary messages (``[Compacted]`` / ``[Reactive compact]``)?"""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and any(
        content.startswith(f"[{label}]{SUMMARY_PREFIX}") for label in SUMMARY_LABELS)


def embedded_summary(message: dict) -> str | None:
    """The decoded summary inside a ``[Compacted]``/``[Reactive compact]`` message, else None."""
    if not is_summary_message(message):
        return None
    content = message["content"]
    _, _, rest = content.partition(SUMMARY_FIELD)
    encoded = rest.rsplit(TRANSCRIPT_FIELD, 1)[0]
    try:
        text = json.loads(encoded)
    except ValueError:
        return encoded
    return text if isinstance(text, str) else encoded


def request_in_summary(message: dict) -> str | None:
    """The user request a summary message carries, else None. A history compacted before
    ends in one: taking all of it for the next request would nest the old summary in the
    new one, and grow the history at every compaction."""
    if not is_summary_message(message):
        return None
    _, _, rest = message["content"].partition(SUMMARY_PREFIX)
    request, found, _ = rest.partition("\n\n" + SUMMARY_FIELD)
    return request if found else None


def parse_summary(text: str, notes_label: str) -> SummaryFacts:
    """Read a rendered summary back into facts (unknown lines are ignored, never nested)."""
    body, _, notes = text.partition(f"\n{notes_label}\n")
    facts = SummaryFacts(notes=notes.strip())
    current: list[str] | None = None
    for line in body.splitlines():
        if line.startswith("- ") and current is not None:
            current.append(line[2:].strip())
            continue
        key, sep, value = line.partition(": ")
        if not sep and line.endswith(":"):
            key, value = line[:-1], ""
        current = None
        value = value.strip()
        if key == "Goal":
            facts.goal = value
        elif key == "Earlier goals":
            current = facts.earlier_goals
        elif key == "User constraints":
            current = facts.constraints
        elif key == "Commands run":
            current = facts.commands
        elif key == "Files touched":
            facts.files = [f for f in value.split(", ") if f]
        elif key == "Tool calls":
            for part in value.split(", "):
                match = _CALL.match(part.strip())
                if match:
                    facts.calls[match.group(2)] += int(match.group(1))
        elif key == "Last assistant note":
            facts.last_note = value
        elif key == "Messages summarised" and value.isdigit():
            facts.summarised = int(value)
        elif key == "Earlier summary":
            facts.earlier_text = value
    if facts == SummaryFacts(notes=facts.notes) and body.strip():
        facts.earlier_text = body  # not ours (a model wrote it): kept as one clipped line
    return facts


def render_summary(facts: SummaryFacts, max_items: int) -> str:
    """The summary text: each list capped at its newest ``max_items``, each item clipped."""
    goal = clip(facts.goal, GOAL_CHARS) or "(none given)"
    parts = [f"Goal: {goal}"]
    earlier = [g for g in _newest(facts.earlier_goals, GOAL_CHARS, EARLIER_GOALS + 1)
               if g != goal][-EARLIER_GOALS:]
    _bullets(parts, "Earlier goals", earlier)
    _bullets(parts, "User constraints", _newest(facts.constraints, ITEM_CHARS, max_items))
    files = _newest(facts.files, ITEM_CHARS, max_items * 2)
    if files:
        parts.append("Files touched: " + ", ".join(files))
    if facts.calls:
        parts.append("Tool calls: " + ", ".join(
            f"{n}×{clip(name, 60)}" for name, n in sorted(facts.calls.items())[: max_items * 2]))
    _bullets(parts, "Commands run", _newest(facts.commands, COMMAND_CHARS, max_items))
    if facts.last_note:
        parts.append(f"Last assistant note: {clip(facts.last_note, NOTE_CHARS)}")
    if facts.earlier_text:
        parts.append(f"Earlier summary: {clip(facts.earlier_text, NOTE_CHARS)}")
    parts.append(f"Messages summarised: {facts.summarised}")
    return "\n".join(parts)


def _newest(items: list[str], chars: int, keep: int) -> list[str]:
    """The last ``keep`` distinct items, clipped, in order (a repeat counts once, newest)."""
    clipped = [c for c in (clip(item, chars) for item in items) if c]
    return list(dict.fromkeys(reversed(clipped)))[:keep][::-1]


def _bullets(parts: list[str], title: str, items: list[str]) -> None:
    if items:
        parts.append(f"{title}:")
        parts.extend(f"- {item}" for item in items)
