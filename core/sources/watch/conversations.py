"""Requests grouped into conversations, each compared with the one before it.

A client resends its whole history on every call, so two consecutive requests of one
conversation tell what it changed in between (:mod:`core.sources.watch.history_diff`:
messages appended, removed, rewritten, and the client's compactions as ``stage`` events).
This module decides which requests are consecutive. An OpenAI request's history is its
``input`` items or chat ``messages``, read through :mod:`core.sources.watch.history_shapes`;
what the request asks (a compaction, a prewarm, a ``previous_response_id`` chain) comes in
:class:`Asks`.

A conversation is keyed by its family — the client's session and agent when it names
them, else its system prompt without volatile header lines
(:mod:`core.sources.watch.identity`; :func:`family_key`) — and its first message. A
summary replaces the first message, so a request whose key is new but whose family
matches a known conversation, and which starts with a summary or still carries one of its
assistant messages, continues that conversation instead of starting one. A client's
request *for* a summary (``identity.is_summary_request``) is placed in its conversation
but neither compared nor remembered: the compaction shows on the request after it,
against the last turn before it. Each ledger entry names the request whose body
held what went (``"where": "request N"``) and the conversation, as the recording's lines do.

Only the last request of each conversation is kept, and only for the
:data:`MAX_CONVERSATIONS` used most recently, within :data:`MAX_HELD_CHARS` (the newest is
kept whatever its size): a watch that sees thousands of distinct conversations holds a
bounded amount (before, every conversation's last request stayed forever: 40 distinct
5 MB conversations cost 420 MB). Messages are compared by a digest of their JSON, not the
JSON itself, so the parsed history is the only copy held.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from core.events import Stage
from core.sources.watch.history_diff import diff_requests, key_digest, key_json, message_key
from core.sources.watch.history_shapes import SUMMARY_MARKERS, is_summary, text_of, tool_results
from core.sources.watch.identity import (
    is_side_call,
    is_summary_request,
    openai_session,
    session_of,
    stable_system_text,
)
from core.sources.watch.openai_requests import history, is_instructions

__all__ = ["SUMMARY_MARKERS", "Asks", "Change", "Conversations", "diff_requests", "family_key",
           "message_key", "text_of", "tool_results"]

MAX_CONVERSATIONS = 32  # conversations whose last request is kept, most recently used
MAX_HELD_CHARS = 64 << 20  # JSON chars of those requests' messages, at most (bar the newest)


def _digest(*parts: str) -> str:
    sha = hashlib.sha1()
    for part in parts:
        sha.update(part.encode("utf-8", errors="replace"))
        sha.update(b"\0")
    return sha.hexdigest()[:8]


@dataclass(frozen=True)
class Asks:
    """What an OpenAI request asks of its conversation, read from its body and the client's
    headers: ``summary`` — the client's compaction request (Codex's checkpoint summary or
    remote ``compaction_trigger``, a ``/responses/compact`` call), whose effect shows on the
    next request; ``aside`` — a call beside the turns (Codex's prewarm), placed but never
    compared; ``follows_response`` — ``previous_response_id`` is set, so the body holds only
    the new items; ``trigger`` — the client's word for what set a compaction off;
    ``window`` — Codex's count of compactions in its thread (``x-codex-window-id``): one
    higher than the conversation's last turn says the history was compacted in between,
    even when the watch did not see the compaction request (it started later)."""

    summary: bool = False
    aside: bool = False
    follows_response: bool = False
    trigger: str | None = None
    window: int | None = None  # Codex's context window number: one more per compaction


@dataclass(frozen=True)
class Change:
    """What one request changed against the previous request of its conversation."""

    conversation: str
    appended: int = 0
    removed: int = 0
    rewritten: int = 0
    stages: tuple[Stage, ...] = ()


@dataclass
class _Conversation:
    id: str
    system_key: str
    request_id: int
    messages: list[Any] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    size: int = 0  # JSON chars of ``messages``
    first_keys: set[str] = field(default_factory=set)  # the keys it is found by
    summary_asked: bool = False  # the client asked for a summary since the last turn
    trigger: str | None = None  # what set that off, in the client's word (Codex's)
    window: int | None = None  # Codex's window number at the last turn


def family_key(body: dict[str, Any], named: str | None, agent: str | None, *,
               api_openai: bool = False) -> str:
    """What the conversations of one agent of one client session share. A client that names
    its session is known by it (and the agent) alone: its system prompt can change within
    the session — Claude Code describes the model as "Opus 4.8 (1M context)" in a session's
    first run and as "Opus 4.8" once it is resumed, and rewrites the prompt on ``/model``.
    A client that names none (``named``: its session id, or None) is known by its system
    prompt, volatile lines left out."""
    if named is not None:
        return _digest("session", named, agent or "")
    return _digest(stable_system_text(body, api_openai=api_openai),
                   *([agent] if agent else []))


class Conversations:
    """Tracks the last request of the conversations used most recently; one per watch."""

    def __init__(self, max_conversations: int = MAX_CONVERSATIONS,
                 max_chars: int = MAX_HELD_CHARS) -> None:
        self.max_conversations, self.max_chars = max_conversations, max_chars
        self._held: OrderedDict[str, _Conversation] = OrderedDict()  # by id, oldest first
        self._by_key: dict[str, str] = {}  # system + first message → conversation id
        self._latest_by_system: dict[str, str] = {}
        self.held_chars = 0

    def held(self) -> tuple[int, int]:
        """(conversations, JSON chars of their last requests) held now."""
        return len(self._held), self.held_chars

    def observe(self, request_id: int, body: dict[str, Any], session: str | None = None,
                agent: str | None = None, *, asks: Asks | None = None) -> Change:
        """Place one request in its conversation and compare it with the one before
        (``session``, ``agent``: the client's id headers, when it sent them; ``asks``: an
        OpenAI request, and what it asks for)."""
        openai = asks is not None
        messages = history(body) if openai else (
            given if isinstance(given := body.get("messages"), list) else [])
        named = openai_session(body, session) if openai else session_of(body, session)
        system_key = family_key(body, named, agent, api_openai=openai)
        dumped = [key_json(m) for m in messages]
        size = sum(len(d) for d in dumped)
        keys = [key_digest(d) for d in dumped]
        # Only a named session mixes its side calls into its conversations' family.
        side = named is not None and is_side_call(body, api_openai=openai)
        # An OpenAI history opens with its instructions: the first entry after them tells
        # two conversations apart, as a Messages request's first message does.
        first = next((i for i, m in enumerate(messages) if not is_instructions(m)), 0) \
            if openai else 0
        key = _digest(system_key, *(["side"] if side else []),
                      dumped[first] if first < len(dumped) else "")
        del dumped
        summary_asked = asks.summary if asks is not None else is_summary_request(body)
        if summary_asked or (asks is not None and asks.aside):
            # a side call: placed, never the turn to compare with
            known = self._find(self._by_key.get(key))
            if known is not None and summary_asked:
                known.summary_asked = True
                known.trigger = asks.trigger if asks is not None else None
            return Change(conversation=known.id if known else f"c{key}")
        if asks is not None and asks.follows_response:
            chained = self._find(self._latest_by_system.get(system_key))
            if chained is not None:  # only the new items are sent: all appended
                chained.messages = chained.messages + messages
                chained.keys, chained.request_id = chained.keys + keys, request_id
                self._keep(chained, key, chained.size + size)
                return Change(chained.id, appended=len(messages))
        conv = self._find(self._by_key.get(key)) or (
            None if side else self._continued(system_key, messages, keys))
        if conv is None:
            conv = _Conversation(id=f"c{key}", system_key=system_key, request_id=request_id,
                                 messages=messages, keys=keys,
                                 window=asks.window if asks is not None else None)
            self._keep(conv, key, size, latest=not side)
            return Change(conversation=conv.id, appended=len(messages))
        if asks is not None and asks.window is not None:
            if conv.window is not None and asks.window > conv.window:
                conv.summary_asked = True  # Codex opened a new window: it compacted
            conv.window = asks.window
        appended, removed, rewritten, stages = diff_requests(
            conv.messages, messages, from_request=conv.request_id, prev_keys=conv.keys,
            cur_keys=keys, conversation=conv.id, summary_asked=conv.summary_asked)
        if conv.trigger is not None:
            stages = tuple(dataclasses.replace(s, trigger=conv.trigger) for s in stages)
        conv.summary_asked, conv.trigger = False, None
        conv.messages, conv.keys, conv.request_id = messages, keys, request_id
        self._keep(conv, key, size, latest=not side)
        return Change(conv.id, appended, removed, rewritten, stages)

    def _find(self, conversation_id: str | None) -> _Conversation | None:
        return self._held.get(conversation_id) if conversation_id is not None else None

    def _keep(self, conv: _Conversation, key: str, size: int, latest: bool = True) -> None:
        """Hold ``conv`` as the most recently used, then forget the least recently used
        while over a bound (never the one just kept). ``latest``: it is the conversation a
        compacted request of its family continues (a side call's never is)."""
        known = self._held.get(conv.id)
        if known is not None and known is not conv:  # the same id, found afresh
            self._forget(conv.id)
        self.held_chars += size - (conv.size if conv.id in self._held else 0)
        conv.size = size
        self._held[conv.id] = conv
        self._held.move_to_end(conv.id)
        conv.first_keys.add(key)
        self._by_key[key] = conv.id
        if latest:
            self._latest_by_system[conv.system_key] = conv.id
        while len(self._held) > 1 and (len(self._held) > self.max_conversations
                                       or self.held_chars > self.max_chars):
            self._forget(next(iter(self._held)))

    def _forget(self, conversation_id: str) -> None:
        old = self._held.pop(conversation_id)
        self.held_chars -= old.size
        for key in old.first_keys:
            if self._by_key.get(key) == old.id:
                del self._by_key[key]
        if self._latest_by_system.get(old.system_key) == old.id:
            del self._latest_by_system[old.system_key]

    def _continued(self, system_key: str, messages: list[Any], keys: list[str]
                   ) -> _Conversation | None:
        conv = self._find(self._latest_by_system.get(system_key))
        if conv is None or not messages or len(conv.messages) < 2:
            return None
        # After the client asked for a summary, its next new history is the compacted one.
        starts_with_summary = conv.summary_asked or is_summary(messages[0])
        # An assistant message carried over: a subagent's first request shares reminders
        # and system messages with its siblings, never a reply.
        replies = {k for k, m in zip(conv.keys, conv.messages, strict=False)
                   if isinstance(m, dict) and m.get("role") == "assistant"}
        shares = bool(set(keys[1:]) & replies)
        return conv if starts_with_summary or shares else None
