"""Requests grouped into conversations, and what a client changed between two of them.

A client resends its whole history on every call, so two consecutive requests of one
conversation tell what happened in between: messages appended (the last reply and the new
turn), and — the view no client gives — what it removed or rewrote itself. Three kinds of
client compaction become ``stage`` events with ``by="client"``:

* ``client_micro_compact`` — tool results replaced by a shorter placeholder (Claude Code's
  micro-compaction writes ``[Old tool result content cleared]``);
* ``client_summary`` — the history shrank and a new message (a summary) took the place of
  the past;
* ``client_truncate`` — the history shrank with nothing in its place.

An OpenAI request's history is its ``input`` items or chat ``messages``, read through
:mod:`core.sources.watch.history_shapes`; what the request asks (a compaction, a prewarm, a
``previous_response_id`` chain) comes in :class:`Asks`. Codex puts its summary (or the
``compaction`` item) *after* the history it kept, so it is looked for there too.

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

Comparisons ignore ``cache_control`` markers (clients move them to the newest block on
every call) and a string content equals one text block of that string (Claude Code sends
its newest prompt as a block and, one call later, the same prompt as a string): neither is
a change to the context.

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
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from core.compact.managers import Manager
from core.events import Stage
from core.measure import json_chars
from core.sources.watch.history_shapes import (
    SUMMARY_MARKERS,
    encrypted_size,
    is_summary,
    is_summary_item,
    preview_of,
    result_text,
    role_of,
    summary_text,
    text_of,
    tool_ids,
    tool_results,
)
from core.sources.watch.identity import (
    comparable,
    is_side_call,
    is_summary_request,
    openai_session,
    session_of,
    stable_system_text,
)
from core.sources.watch.openai_requests import history, is_instructions

__all__ = ["SUMMARY_MARKERS", "Asks", "Change", "Conversations", "diff_requests", "family_key",
           "message_key", "text_of", "tool_results"]

PREVIEW = 160
BY = Manager.CLIENT
MAX_CONVERSATIONS = 32  # conversations whose last request is kept, most recently used
MAX_HELD_CHARS = 64 << 20  # JSON chars of those requests' messages, at most (bar the newest)


def _key_json(message: Any) -> str:
    return json.dumps(comparable(_without_item_id(message)), ensure_ascii=False,
                      sort_keys=True)


# Keys of a Responses item that label it rather than hold context: Codex sends the context
# it re-injects after a compaction (its instructions, the environment) as the same text
# under a new ``id``, and its built-in provider stamps items with a creation time.
ITEM_LABELS = ("id", "internal_chat_message_metadata_passthrough")


def _without_item_id(message: Any) -> Any:
    """A Responses item as compared: without the keys that only label it."""
    if isinstance(message, dict) and "type" in message:
        return {k: v for k, v in message.items() if k not in ITEM_LABELS}
    return message


def _key_digest(dumped: str) -> str:
    return hashlib.blake2b(dumped.encode("utf-8", errors="surrogatepass"),
                           digest_size=16).hexdigest()


def message_key(message: Any) -> str:
    """A message's identity for comparison: a digest of its normalised JSON (no
    ``cache_control``; a string content as one text block)."""
    return _key_digest(_key_json(message))


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


def _result_key(content: Any) -> str:
    return message_key({"content": content})  # a string result equals one text block


def diff_requests(prev: list[Any], cur: list[Any], *, from_request: int,
                  prev_keys: list[str] | None = None,
                  cur_keys: list[str] | None = None, conversation: str | None = None,
                  summary_asked: bool = False) -> tuple[int, int, int, tuple[Stage, ...]]:
    """(appended, removed, rewritten, client stages) between two message lists; the
    ledger's ``where`` names ``from_request`` (of ``conversation``, when given).

    ``summary_asked``: the client asked for a summary in between, so history that went is
    a summary's doing even when the summary it kept reads as before (a model that
    summarises twice alike)."""
    prev_keys = prev_keys if prev_keys is not None else [message_key(m) for m in prev]
    cur_keys = cur_keys if cur_keys is not None else [message_key(m) for m in cur]
    same = 0
    while same < min(len(prev), len(cur)) and prev_keys[same] == cur_keys[same]:
        same += 1
    if same == len(prev):
        return len(cur) - same, 0, 0, ()
    cur_set = set(cur_keys)
    prev_results, cur_results = tool_results(prev), tool_results(cur)
    rewritten_ids = [i for i, v in prev_results.items() if i in cur_results
                     and _result_key(v) != _result_key(cur_results[i])]
    removed = [i for i, k in enumerate(prev_keys) if k not in cur_set
               and not any(t in cur_results or t in rewritten_ids for t in tool_ids(prev[i]))
               and not (i < len(cur) and _same_slot(prev[i], cur[i]))]
    # The new tail: messages after the last one carried over from ``prev``.
    prev_set = set(prev_keys)
    last_kept = max((j for j, k in enumerate(cur_keys) if k in prev_set), default=-1)
    if rewritten_ids:
        last_kept = max(last_kept, max(j for j, m in enumerate(cur)
                                       if set(tool_ids(m)) & set(rewritten_ids)))
    if last_kept == -1 and cur and is_summary(cur[0]):
        last_kept = 0  # the summary stands in for the past; what follows it is new
    if summary_asked and removed:
        # Codex puts its summary (or the compaction item) after the history it kept: it is
        # part of what the compaction left, not the next turn.
        tail = next((j for j in range(last_kept + 1, len(cur))
                     if cur_keys[j] not in prev_set and is_summary_item(cur[j])), None)
        last_kept = tail if tail is not None else last_kept
    appended = len(cur) - last_kept - 1
    kept = cur[: last_kept + 1]
    stages: list[Stage] = []
    where = {"where": f"request {from_request}",
             **({"conversation": conversation} if conversation else {})}
    shrunk = [i for i in rewritten_ids
              if json_chars(cur_results[i]) < json_chars(prev_results[i])]
    if shrunk:  # a result that grew was rewritten, not compacted
        stages.append(_micro_stage(prev, kept, prev_results, cur_results, shrunk, where))
    if removed:
        inserted = [m for m, k in zip(kept, cur_keys, strict=False) if k not in prev_set
                    and not set(tool_ids(m)) & set(rewritten_ids)]
        if summary_asked and not any(is_summary(m) for m in inserted):
            inserted = [m for m in kept if is_summary(m)][:1]
        stages.append(_shrink_stage(prev, kept, removed, inserted, where))
    rewritten = len(rewritten_ids) + sum(
        1 for i in range(min(len(prev), len(cur)))
        if prev_keys[i] != cur_keys[i] and i not in removed and _same_slot(prev[i], cur[i])
        and not set(tool_ids(prev[i])) & set(rewritten_ids))
    return appended, len(removed), rewritten, tuple(stages)


def _same_slot(a: Any, b: Any) -> bool:
    """A message rewritten in place: same role, same tool ids, different content."""
    return (isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role")
            and tool_ids(a) == tool_ids(b) and bool(tool_ids(a)))


def _micro_stage(prev: list[Any], kept: list[Any], prev_results: dict[str, Any],
                 cur_results: dict[str, Any], ids: list[str], where: dict[str, str]) -> Stage:
    ledger = tuple(
        {"tool_use_id": i, "stage": "client_micro_compact",
         "chars": json_chars(prev_results[i]), "after_chars": json_chars(cur_results[i]),
         "placeholder": result_text(cur_results[i])[:PREVIEW], **where}
        for i in ids)
    return Stage(stage="client_micro_compact", before_chars=json_chars(prev),
                 after_chars=json_chars(kept), before_messages=len(prev),
                 after_messages=len(kept), tool_use_ids=tuple(ids), ledger=ledger, by=BY)


def _shrink_stage(prev: list[Any], kept: list[Any], removed: list[int], inserted: list[Any],
                  where: dict[str, str]) -> Stage:
    summary = next((m for m in inserted if is_summary(m)), None)
    name = "client_summary" if summary is not None else "client_truncate"
    ledger: list[dict[str, Any]] = [
        {"stage": name, "message_index": i, "role": role_of(prev[i]),
         "chars": json_chars(prev[i]), "preview": preview_of(prev[i])[:PREVIEW],
         "tool_use_ids": tool_ids(prev[i]), **where}
        for i in removed]
    if summary is not None:
        encrypted = encrypted_size(summary)
        ledger.append({"stage": name, "summary": summary_text(summary)[:PREVIEW],
                       "chars": json_chars(summary),
                       **({"encrypted_chars": encrypted} if encrypted is not None else {}),
                       **{k: v for k, v in where.items() if k == "conversation"}})
    ids = tuple(t for i in removed for t in tool_ids(prev[i]))
    return Stage(stage=name, before_chars=json_chars(prev), after_chars=json_chars(kept),
                 before_messages=len(prev), after_messages=len(kept), tool_use_ids=ids,
                 ledger=tuple(ledger), by=BY)


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
        dumped = [_key_json(m) for m in messages]
        size = sum(len(d) for d in dumped)
        keys = [_key_digest(d) for d in dumped]
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
