"""The largest items of a message list as it was sent, and how long each has been there.

Category totals say *what kind* of content fills a context; a learner fixing one asks
*which* piece: the 60k tool result, the file read three times, the thinking block. An item
is one such piece — a tool result, a file read, a tool call, a thinking block, an image or
document, a summary, a text — with its size, the tool and what it was given, and who wrote
it when it is no original content: a ctxlab stage (micro's placeholder, a persisted
preview, snip's marker, a summary: :mod:`core.compact.breakdown`) or the recorded agent (a
result Claude Code cleared). Repeated content is one group: the same digest, or the same
file read again (the content may differ by a line; the room it takes is the point).

:class:`Ages` follows a side's requests in order and remembers the request where each
content digest first appeared, so an item's age survives the list around it changing.
The three API shapes are read: Messages blocks, Responses items, Chat Completions messages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from typing import Any

from core.compact.breakdown import text_kind
from core.measure import estimate_tokens, json_chars
from core.sources.replay.original import CLEARED
from core.sources.watch.history_shapes import result_text
from core.sources.watch.openai_requests import (
    CODEX_SUMMARY_PREFIX,
    IMAGE_PARTS,
    TOOL_CALLS,
    TOOL_OUTPUTS,
    item_type,
)

# The tools whose result is a file's content, and the input key naming the file.
READ_TOOLS = {"Read": "file_path", "read_file": "path", "view": "path", "read": "path"}
# Who wrote an engine-made text (the shapes of core.compact.breakdown.text_kind).
WRITERS = {"pointer": "micro_compact", "wrapper": "tool_result_budget",
           "marker": "snip_compact", "summary": "compact_history"}
REACTIVE = "[Reactive compact]"  # how reactive_compact's summary opens (compact_history's:
# "[Compacted]")
CLEARED_BY = "Claude Code"  # the agent that writes :data:`CLEARED`
# How a recorded agent's summary opens, and the agent.
AGENT_SUMMARIES = (("this session is being continued from a previous conversation",
                    "Claude Code"), (CODEX_SUMMARY_PREFIX, "Codex"))
TARGET = 120  # chars of a tool's input kept to name it


@dataclass(frozen=True)
class Item:
    """One item, or a group of the same content (``count`` copies, ``total_chars`` in all;
    the other fields are the largest copy's). ``tokens`` are the group's, in the session's
    chars-per-token ratio when known, else the engine's estimate; ``first_request`` and
    ``age`` (requests since) come from :class:`Ages` when one is given."""

    kind: str  # tool_result, file_read, tool_call, thinking, image, summary, pointer, text…
    role: str
    message: int  # index of the message that holds it
    chars: int  # its JSON chars
    digest: str
    content: str  # the full content, readable (what the viewer opens)
    tool: str = ""
    target: str = ""  # what the tool was given (a file path, a command)
    call_id: str = ""  # the tool call it makes or answers
    touched: str = ""  # the stage or agent that wrote it
    count: int = 1
    total_chars: int = 0
    tokens: int = 0
    first_request: int | None = None
    age: int | None = None


def _digest(value: Any) -> str:
    dumped = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                             sort_keys=True)
    return hashlib.blake2b(dumped.encode("utf-8", errors="surrogatepass"),
                           digest_size=12).hexdigest()


def _readable(value: Any) -> str:
    text = value if isinstance(value, str) else result_text(value)
    return text or json.dumps(value, ensure_ascii=False, indent=2)


def _piece(kind: str, role: str, index: int, value: Any, text: str | None = None,
           **fields: Any) -> Item:
    """An item of ``value`` (sized as the breakdown sizes it); ``text``: what the viewer
    shows of it, when not the value itself."""
    return Item(kind=kind, role=role, message=index, chars=json_chars(value),
                digest=_digest(value), content=_readable(value) if text is None else text,
                **fields)


def _text_piece(role: str, index: int, text: Any, message: dict[str, Any] | None) -> Item:
    shape = text_kind(text, message)
    kind = {"wrapper": "pointer", "marker": "summary"}.get(shape, shape)
    writer = WRITERS.get(shape, "")
    if shape == "summary" and isinstance(text, str) and text.startswith(REACTIVE):
        writer = "reactive_compact"
    opening = text.lstrip().lower()[:100] if isinstance(text, str) else ""
    agent = next((who for start, who in AGENT_SUMMARIES if start in opening), None)
    if shape == "text" and agent is not None:
        kind, writer = "summary", agent
    return _piece(kind, role, index, text, touched=writer)


def _result_piece(role: str, index: int, content: Any, call_id: str) -> Item:
    """A tool result: ctxlab's pointer, the agent's cleared marker, or the content."""
    shape = text_kind(content) if isinstance(content, str) else "text"
    if shape in ("pointer", "wrapper"):
        return _piece("pointer", role, index, content, touched=WRITERS[shape], call_id=call_id)
    if content == CLEARED:
        return _piece("cleared", role, index, content, touched=CLEARED_BY, call_id=call_id)
    return _piece("tool_result", role, index, content, call_id=call_id)


def _blocks(role: str, index: int, message: dict[str, Any]) -> Iterator[Item]:
    """The items of a Messages (or Chat Completions) message."""
    content = message.get("content")
    if role == "tool":  # Chat Completions: one result per message
        yield _result_piece(role, index, content, str(message.get("tool_call_id")))
        return
    if isinstance(content, str) and content:
        yield _text_piece(role, index, content, message)
    for block in content if isinstance(content, list) else []:
        kind = str(block.get("type", "")) if isinstance(block, dict) else ""
        if kind in ("text", "input_text", "output_text"):
            yield _text_piece(role, index, block.get("text", ""), message)
        elif kind.endswith("tool_use"):
            yield _piece("tool_call", role, index, block, tool=str(block.get("name", "")),
                         target=call_target(str(block.get("name", "")),
                                            block.get("input")),
                         call_id=str(block.get("id", "")))
        elif kind.endswith("tool_result"):
            yield _result_piece(role, index, block.get("content", ""),
                                str(block.get("tool_use_id", "")))
        elif kind in ("thinking", "redacted_thinking"):
            thought = block.get("thinking")
            yield _piece("thinking", role, index, block,
                         text=thought if isinstance(thought, str) else None)
        elif kind in ("image", "document") or kind in IMAGE_PARTS:
            yield _piece("image", role, index, block)
        elif kind == "compaction":
            yield _piece("summary", role, index, block, touched="api_compaction")
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            inner = call.get("function")
            function: dict[str, Any] = inner if isinstance(inner, dict) else {}
            name = str(function.get("name", ""))
            yield _piece("tool_call", role, index, call, tool=name,
                         target=call_target(name, function.get("arguments")),
                         call_id=str(call.get("id", "")))


def _entry(index: int, entry: Any) -> Iterator[Item]:
    """The items of one history entry, whichever API sent it."""
    if not isinstance(entry, dict):
        return
    kind = item_type(entry)
    if kind in TOOL_CALLS:
        name = str(entry.get("name") or kind)
        yield _piece("tool_call", kind, index, entry, tool=name,
                     target=call_target(name, entry.get("arguments") or entry.get("input")
                                    or entry.get("action")),
                     call_id=str(entry.get("call_id") or entry.get("id")))
    elif kind in TOOL_OUTPUTS:
        yield _result_piece(kind, index, entry.get("output", ""), str(entry.get("call_id")))
    elif kind == "reasoning":
        yield _piece("thinking", kind, index, entry)
    elif kind == "compaction":
        yield _piece("summary", kind, index, entry, touched="client")
    else:
        yield from _blocks(str(entry.get("role") or kind), index, entry)


def call_target(tool: str, given: Any) -> str:
    """What a tool was given, as a reader names it: the file a read names, else the first
    string (or argv) it was given, else its input as JSON. (The what-if fact finder asks
    it too, so a file is named one way everywhere.)"""
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            return given[:TARGET]
    if not isinstance(given, dict):
        return ""
    key = READ_TOOLS.get(tool)
    if key and isinstance(given.get(key), str):
        return str(given[key])
    for value in given.values():  # a command comes as a string or as its argv
        if isinstance(value, str):
            return value[:TARGET]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)[:TARGET]
    return json.dumps(given, ensure_ascii=False)[:TARGET]


def items_of(messages: Sequence[Any]) -> list[Item]:
    """Every item of ``messages``, in order; a tool result named by its call (the tool and
    what it was given), and a read tool's result a ``file_read``."""
    items = [item for i, m in enumerate(messages) for item in _entry(i, m)]
    calls = {it.call_id: it for it in items if it.kind == "tool_call"}
    named: list[Item] = []
    for item in items:
        call = calls.get(item.call_id) if item.kind != "tool_call" and item.call_id else None
        if call is not None:
            read = item.kind == "tool_result" and call.tool in READ_TOOLS
            item = replace(item, tool=call.tool, target=call.target,
                           kind="file_read" if read else item.kind)
        named.append(item)
    return named


def _group_key(item: Item) -> str:
    return f"read:{item.target}" if item.kind == "file_read" and item.target else item.digest


def largest(messages: Sequence[Any], n: int = 20, *, chars_per_token: float | None = None,
            ages: Ages | None = None) -> list[Item]:
    """The ``n`` largest items of ``messages`` (groups of repeated content counted whole),
    largest first."""
    groups: dict[str, list[Item]] = {}
    for item in items_of(messages):
        groups.setdefault(_group_key(item), []).append(item)
    ranked = sorted(groups.values(), key=lambda g: -sum(i.chars for i in g))[:n]
    return [_grouped(group, chars_per_token, ages) for group in ranked]


def _grouped(group: list[Item], ratio: float | None, ages: Ages | None) -> Item:
    biggest = max(group, key=lambda i: i.chars)
    total = sum(i.chars for i in group)
    tokens = round(total / ratio) if ratio else \
        sum(estimate_tokens(i.content) for i in group)
    first = min((f for i in group if (f := ages.first(i.digest)) is not None), default=None) \
        if ages is not None else None
    age = ages.current - first if ages is not None and first is not None else None
    return replace(biggest, count=len(group), total_chars=total, tokens=tokens,
                   first_request=first, age=age)


class Ages:
    """The request (1, 2, …) where each item's content first appeared, over one side's
    requests in order. A message is read once however many requests carry it (kept by
    identity, as the engine copies a message it changes instead of mutating it); the
    messages of the last list are held, so an id seen stays that message's. A long session
    sends thousands of messages per request, nearly all seen before, so the look-ups run
    a list at a time in C and only the new messages are read in Python."""

    def __init__(self) -> None:
        self.current = 0
        self._first: dict[str, int] = {}
        self._seen: dict[int, tuple[str, ...]] = {}
        self._held: tuple[Any, ...] = ()

    def observe(self, messages: Sequence[Any]) -> int:
        """The next request's list: returns its number."""
        self.current += 1
        ids = list(map(id, messages))
        fresh = dict(zip(ids, map(self._seen.get, ids), strict=True))
        new = set(ids).difference(self._seen)
        for index in compress(range(len(ids)), map(new.__contains__, ids)):
            digests = tuple(item.digest for item in _entry(index, messages[index]))
            fresh[ids[index]] = digests
            for digest in digests:
                self._first.setdefault(digest, self.current)
        self._seen = fresh  # type: ignore[assignment]  # every id now has its digests
        self._held = tuple(messages)
        return self.current

    def first(self, digest: str) -> int | None:
        return self._first.get(digest)
