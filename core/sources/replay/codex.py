"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

Every line is ``{"timestamp", "type", "payload"}`` (0.171 adds an ``ordinal``). The
conversation is the sequence of ``response_item`` payloads — the Responses API's items,
which the agent sends back as its next request's input — turned into messages by
:mod:`~core.sources.replay.responses_items` (shared with the watch recordings of Responses
API traffic). A reply is the run of assistant items between user-side items; its usage is
found by :mod:`~core.sources.replay.codex_usage`, which copes with every version's order of
``token_count``/``token_usage_record`` lines and items; a ``compacted`` line (and the
``compaction`` item of a remote compaction) is Codex's own compaction
(:mod:`~core.sources.replay.codex_compaction`). The older layout without the envelope is
read through :mod:`~core.sources.replay.codex_legacy`.

Read: ``session_meta.payload`` ``base_instructions.text`` (0.171) or ``instructions``
(older) as the system text, ``turn_context.payload.model``, the context window
(``model_context_window`` of ``token_count``'s ``info``, ``task_started`` or
``turn_context``), ``response_item``, ``event_msg``/``token_count``, ``token_usage_record``,
``compacted``. docs/replay/codex.md lists every line type per Codex version, read or
ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.sources.replay.codex_compaction import (
    compaction_of,
    is_summary_reply,
    summary_of,
    user_items,
)
from core.sources.replay.codex_legacy import enveloped, is_session_line
from core.sources.replay.codex_usage import ResponseUsage, UsageMatcher, window_of
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.sources.replay.reading import jsonl_objects, skip
from core.sources.replay.responses_items import BadItem, item_blocks, item_kind
from core.sources.replay.shape import text_or_none
from core.sources.replay.steps import StepBuilder
from core.usage import context_tokens
from core.wording import plural

AGENT = Manager.CODEX
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                        "compacted", "token_usage_record", "world_state"})
# Lines with nothing for the history: 0.171's snapshot of the environment, and the older
# layout's resume bookkeeping. Counted, never "unknown".
IGNORED_TYPES = frozenset({"world_state", "record_type:state"})
USAGE_EVENTS = frozenset({"token_count"})
WINDOW_EVENTS = frozenset({"task_started"})


def looks_like(first: Any) -> bool:
    """A rollout line in either layout."""
    if is_session_line(first):
        return True
    return isinstance(first, dict) and isinstance(first.get("type"), str) and \
        first["type"] in LINE_TYPES and "payload" in first


def instructions_of(payload: dict[str, Any]) -> str:
    """The session's system prompt: 0.171's ``base_instructions`` (``{"text"}``), or the
    older ``instructions`` string (null when the user gave none)."""
    base = payload.get("base_instructions")
    if isinstance(base, dict):
        base = base.get("text")
    if isinstance(base, str) and base:
        return base
    given = payload.get("instructions")
    return given if isinstance(given, str) else ""


def load(path: Path, text: str) -> Recording:
    recording = Recording(format="codex", path=path, agent=AGENT)
    lines = list(jsonl_objects(text, recording))
    reader = _Reader(recording)
    # the exact per-response records, when the rollout has them, are its only usage lines
    reader.usage.records = any(line.data.get("type") == "token_usage_record"
                               for line in lines)
    legacy = False
    for index, line in enumerate(lines):
        data = line.data
        if index == 0 and is_session_line(data):
            legacy = True
            recording.note("layout", "the older rollout layout (no {type, payload} envelope, "
                           "Codex 0.2x): it records no usage", line.number)
        if legacy:
            kind, payload = enveloped(data, index == 0)
        else:
            raw_kind, raw = data.get("type"), data.get("payload")
            kind = raw_kind if isinstance(raw_kind, str) else repr(raw_kind)
            payload = raw if isinstance(raw, dict) else {}
        try:
            reader.line(kind, payload, line.number, text_or_none(data.get("timestamp")))
        except BadItem as exc:
            skip(recording, line.number, f"line {line.number}: {exc}; skipped")
    reader.finish()
    return recording


class _Reader:
    """The rollout's lines, in order, into steps."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.steps = StepBuilder(recording)
        self.usage = ResponseUsage()
        self.matcher = UsageMatcher(self.steps)
        self.system: list[str] = []
        self.model: str | None = None
        self.user_messages: list[Message] = []  # what a message-only compaction keeps
        self.sealed: Compaction | None = None  # a remote compaction item, not yet followed

    def line(self, kind: str, payload: dict[str, Any], number: int,
             stamp: str | None) -> None:
        """One line into the steps. A field of the wrong type raises :class:`BadItem`."""
        skipped = self.recording.skipped
        event = text_or_none(payload.get("type"))
        if kind == "session_meta":
            said = instructions_of(payload)
            if said and not self.system:
                self.system.append(said)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
            self._window(payload)
        elif kind == "token_usage_record" or (
                kind == "event_msg" and event in USAGE_EVENTS):
            self._window(payload)
            usage = self.usage.new(kind, payload)
            if usage is not None:
                self.matcher.arrived(usage)
        elif kind == "event_msg":
            if event in WINDOW_EVENTS:
                self._window(payload)
            skipped[f"event_msg:{payload.get('type')}"] += 1
        elif kind == "compacted":
            self._compacted(payload, number, stamp)
        elif kind == "response_item":
            self._item(payload, number, stamp)
        elif kind in IGNORED_TYPES:
            skipped[kind] += 1
        else:
            skipped[f"unknown type {kind!r}"] += 1

    def _window(self, payload: dict[str, Any]) -> None:
        window = window_of(payload)
        if window is not None:
            self.recording.window_tokens = window

    def _item(self, item: dict[str, Any], number: int, stamp: str | None) -> None:
        found = item_blocks(item, f"call_line_{number}")
        if found is None:
            self.recording.skipped[f"response_item:{item_kind(item)}"] += 1
        elif found.role == "system":
            said = found.blocks[0]["text"]
            if said and said not in self.system:
                self.system.append(said)
        elif item.get("type") == "compaction":
            self._sealed(found.blocks, number, stamp)
        elif found.role == "user":
            self.sealed = None
            self.steps.user(found.blocks)
            if item.get("type", "message") == "message":
                self.user_messages.append({"role": "user", "content": found.blocks})
        else:
            self.sealed = None
            started = self.steps.reply is None or self.steps.closed
            self.steps.assistant(found.blocks, model=self.model, line=number, timestamp=stamp)
            if started:
                self.matcher.reply_started()

    def _pre_tokens(self) -> int | None:
        self.steps.flush()
        last = next((s.usage for s in reversed(self.recording.steps)
                     if isinstance(s, Exchange) and s.usage), None)
        return context_tokens(last) if last else None

    def _sealed(self, blocks: list[dict[str, Any]], number: int, stamp: str | None) -> None:
        """A remote compaction's ``compaction`` item written as an item of its own: the
        compaction, with the session's user messages and the sealed summary kept (a
        ``compacted`` line right after it says more, and replaces what it kept)."""
        pre = self._pre_tokens()
        kept = [{"role": "user", "content": [b for m in self.user_messages
                                             for b in m["content"]] + blocks}]
        self.sealed = self.steps.compaction(Compaction(
            by=AGENT, trigger="auto", kept=kept, summary=summary_of("", kept),
            pre_tokens=pre, usage=self.matcher.take_waiting(), line=number, timestamp=stamp))
        self.user_messages = user_items(kept)

    def _compacted(self, payload: dict[str, Any], number: int, stamp: str | None) -> None:
        usage = None
        if is_summary_reply(self.steps.reply, payload):
            _, usage = self.steps.take_reply()  # the summary call's answer: no turn
        pre = self._pre_tokens()
        if usage is None and self.sealed is None:  # (a sealed one took its usage already)
            usage = self.matcher.take_waiting()
        found = compaction_of(payload, self.user_messages, pre_tokens=pre, usage=usage,
                              line=number, timestamp=stamp)
        if self.sealed is not None:  # the same compaction, its item written first
            self.sealed.kept, self.sealed.summary = found.kept, found.summary
            self.sealed.usage = self.sealed.usage or found.usage
            found = self.sealed
        else:
            self.steps.compaction(found)
        self.sealed = None
        self.user_messages = user_items(found.kept)

    def finish(self) -> None:
        self.steps.finish()
        recording = self.recording
        recording.system = "\n\n".join(self.system)
        recording.model = recording.model or self.model
        if self.matcher.waiting:
            waiting = len(self.matcher.waiting)
            recording.note("usage", f"{plural(waiting, 'recorded usage')} came after the last "
                           f"reply and belong{'s' if waiting == 1 else ''} to no request of "
                           "the file")
