"""A watch recording cut into conversations, with the calls that belong to none set apart.

A proxy sees every call a client makes, in the order it made them: the main agent's
requests, a subagent's requests interleaved with them, a title call, a quota probe, a
``count_tokens``. Replaying all of them as one history reads every switch between them as
the agent rewriting its history, so a recording is replayed one conversation at a time.

A call is a *side call* (never a step of any history) when it is a ``max_tokens: 1``
probe, Codex's ``prewarm``, or — in a recording whose agent uses tools — a call without
``max_tokens`` (``count_tokens``) or a small one without tools (a title). The rest are grouped:

* by the recording's own ``conversation`` field, when the watch wrote one;
* else by session (``metadata.user_id``, a JSON string holding ``session_id``) and system
  prompt, volatile lines left out (Claude Code's ``x-anthropic-billing-header`` line carries
  a hash of the first user message, so it changes at every compaction), and then by
  continuity: a call joins the conversation whose first message it starts with, or — when
  it starts with a summary (Claude Code's "This session is being continued…") or still
  carries a message of that conversation's last request — the latest conversation of its
  session and system prompt (the agent rewrote its history).

A request whose only change to the previous one is tool results replaced by Claude Code's
``[Old tool result content cleared]`` is a micro-compaction (:func:`cleared_results`).

Messages are compared as content, not as bytes: ``cache_control`` moves to the newest block
on every call, and a prompt sent as a string once is sent as one text block the next time
(the watch's own ``identity.comparable``, so both read a recording alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.messages import system_text
from core.sources.replay.codex_compaction import SUMMARY_PREFIX
from core.sources.replay.model import ConversationInfo, Message
from core.sources.replay.original import CLEARED
from core.sources.watch import identity
from core.sources.watch.conversations import message_key

CONTINUED = "This session is being continued from a previous conversation"
# How a rewritten history's first message says it is a summary (Claude Code; the course's
# "[Conversation compressed. …]"; ctxlab's "[Compacted]"; most agents: "summary").
SUMMARY_MARKERS = ("continued from a previous conversation", "conversation compressed",
                   "[compacted]", "summary")
MANUAL_COMPACT = "<command-name>/compact</command-name>"
SIDE_MAX_MESSAGES = 2  # a tool-less call this small, beside an agent that uses tools
LABEL_CHARS = 60


@dataclass
class Call:
    """One recorded line that holds a request body."""

    line: int
    request: dict[str, Any]
    response: dict[str, Any] | None
    messages: list[Message]
    timestamp: str | None = None
    conversation: str | None = None  # the recording's own field, when it has one
    request_id: str | None = None
    api: str = "messages"  # which API the call spoke (its body is Messages-shaped now)
    session: str | None = None  # an OpenAI client's ``prompt_cache_key``
    compaction: bool = False  # an OpenAI client's own compaction call (Codex's)
    trigger: str | None = None  # what that compaction call says started it
    codex: bool = False  # the Codex CLI made it
    prewarm: bool = False  # Codex's ``request_kind: prewarm``: it warms a connection


@dataclass
class Conversation:
    id: str
    calls: list[Call] = field(default_factory=list)
    key: tuple[str, str] = ("", "")  # (session, system prompt without volatile lines)
    first: Any = None  # the first message of its latest call, as content

    def info(self) -> ConversationInfo:
        return ConversationInfo(id=self.id, requests=len(self.calls),
                                first_line=self.calls[0].line,
                                label=label(self.calls[0].messages))


@dataclass
class Split:
    conversations: list[Conversation]
    side_calls: list[tuple[Call, str]]  # (call, what it is)

    def default(self) -> Conversation | None:
        """The longest conversation (the first of equals): the main agent, as a rule."""
        return max(self.conversations, key=lambda c: len(c.calls), default=None)


def same(a: Any, b: Any) -> bool:
    return a is b or identity.comparable(a) == identity.comparable(b)


def session_of(request: dict[str, Any]) -> str:
    """The client's session id from ``metadata.user_id`` ("" when it has none)."""
    return identity.session_of(request) or ""


def stable_system(request: dict[str, Any]) -> str:
    """The system prompt without the lines a client changes within one conversation."""
    return identity.stable_system_text(request)


def texts(message: Message) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content or [] if isinstance(b, dict)
            and b.get("type") == "text" and isinstance(b.get("text"), str)]


def is_summary_request(call: Call) -> bool:
    """Claude Code's compaction call: its summary instructions end the last user message."""
    return identity.is_summary_request(call.request)


def continues_summary(messages: list[Message]) -> bool:
    """Does this history start with Claude Code's summary of a compacted conversation?"""
    return bool(messages) and any(CONTINUED in t for t in texts(messages[0]))


def compaction_call(call: Call) -> bool:
    """The agent's own compaction call, of any client: never a turn of the history."""
    return call.compaction or is_summary_request(call)


def summary_end(messages: list[Message]) -> int | None:
    """Where Codex's compacted history ends: the index of the last message holding its
    "Another language model started…" summary or its encrypted ``compaction`` item (Codex
    keeps everything up to it and appends after it), None when the history holds neither."""
    found = None
    for index, message in enumerate(messages):
        content = message.get("content")
        if any(t.startswith(SUMMARY_PREFIX) for t in texts(message)) or (
                isinstance(content, list) and any(isinstance(b, dict) and b.get("type")
                                                  == "compaction" for b in content)):
            found = index
    return found


def by_claude_code(calls: list[Call]) -> bool:
    """Did Claude Code make these calls? (Its billing line, or its way of compacting.)"""
    return any(line.startswith(identity.VOLATILE_PREFIXES) for call in calls[:1]
               for line in system_text(call.request.get("system")).split("\n")) or any(
        is_summary_request(c) or continues_summary(c.messages) for c in calls)


def manual_compaction(messages: list[Message]) -> bool:
    """Did the user ask for the compaction (``/compact``)? Claude Code keeps the command."""
    return any(MANUAL_COMPACT in t for m in messages if m.get("role") == "user"
               for t in texts(m))


def label(messages: list[Message]) -> str:
    """The conversation's first prompt, short (Claude Code's reminders passed over)."""
    first = next((m for m in messages if m.get("role") == "user"), None)
    said = [t for t in texts(first) if not t.lstrip().startswith("<")] if first else []
    text = " ".join((said[-1] if said else "").split())
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def side_call(call: Call, agent_uses_tools: bool) -> str | None:
    """What this call is, when it belongs to no conversation (else None)."""
    request = call.request
    if request.get("max_tokens") == 1:
        return "quota probe (max_tokens: 1)"
    if call.prewarm:
        return "prewarm (Codex warming a connection)"
    if not agent_uses_tools or request.get("tools") or compaction_call(call):
        return None
    if "max_tokens" not in request and call.api == "messages":
        return "count_tokens"
    if len(call.messages) <= SIDE_MAX_MESSAGES:
        return "side call without tools (a title…)"
    return None


def split(calls: list[Call]) -> Split:
    """The recording's conversations, in order of first appearance, and its side calls."""
    uses_tools = any(c.request.get("tools") for c in calls)
    result = Split([], [])
    by_field: dict[str, Conversation] = {}
    for call in calls:
        what = side_call(call, uses_tools)
        if what is not None:
            result.side_calls.append((call, what))
            continue
        if call.conversation is not None:
            found = by_field.get(call.conversation)
            if found is None:
                found = by_field[call.conversation] = Conversation(id=call.conversation)
                result.conversations.append(found)
        else:
            found = _join(result.conversations, call)
        found.calls.append(call)
    return result


def _join(conversations: list[Conversation], call: Call) -> Conversation:
    key = (call.session or session_of(call.request), stable_system(call.request))
    first = identity.comparable(call.messages[0]) if call.messages else None
    same_key = [c for c in reversed(conversations) if c.key == key]
    found = next((c for c in same_key if c.first == first), None)
    if found is None and same_key and _rewrites(same_key[0], call):
        found = same_key[0]
    if found is None:
        found = Conversation(id=str(len(conversations) + 1), key=key)
        conversations.append(found)
    found.first = first
    return found


def _rewrites(conversation: Conversation, call: Call) -> bool:
    """Does ``call`` look like ``conversation`` with its history rewritten: a summary first,
    or one of its last request's messages still there?"""
    if call.messages and any(m in t.lower() for t in texts(call.messages[0])
                             for m in SUMMARY_MARKERS):
        return True
    if summary_end(call.messages) is not None:
        return True
    last = {message_key(m) for m in conversation.calls[-1].messages}
    return any(message_key(m) in last for m in call.messages[1:])


def cleared_results(old: list[Message], new: list[Message]) -> list[str] | None:
    """The ids of the tool results ``new`` clears in ``old`` when that is all it changes
    there (Claude Code's micro-compaction), else None. Walks the whole history: asked only
    of a request that does not extend the previous one."""
    if len(new) < len(old):
        return None
    ids: list[str] = []
    for before, after in zip(old, new, strict=False):
        a, b = identity.comparable(before), identity.comparable(after)
        if a == b:
            continue
        blocks_a, blocks_b = a.get("content"), b.get("content")
        if a.get("role") != b.get("role") or not isinstance(blocks_a, list) \
                or not isinstance(blocks_b, list) or len(blocks_a) != len(blocks_b):
            return None
        for x, y in zip(blocks_a, blocks_b, strict=True):
            if x == y:
                continue
            if not (isinstance(x, dict) and isinstance(y, dict) and _cleared(x, y)):
                return None
            ids.append(str(y.get("tool_use_id")))
    return ids or None


def _cleared(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Is ``after`` the tool result ``before`` with its content replaced by the marker?"""
    content = after.get("content")
    return before.get("type") == after.get("type") == "tool_result" \
        and before.get("tool_use_id") == after.get("tool_use_id") \
        and isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
        and str(content[0].get("text", "")).startswith(CLEARED)
