"""Which part of each request a prompt cache would have served, under any strategy.

A recorded session's ``usage`` says what the cache did for the requests the agent really
sent; a strategy that would have sent something else needs an estimate. The estimate follows
the API's rule in its simplest form: a request can read from the cache exactly the part that
is byte-identical to the start of the previous request; everything after the first change is
written again. That is what makes strategies differ in price and not only in size: a
compaction that rewrites the history from its first message turns the next request into a
full cache write, while clearing old tool results deep in the history keeps everything
before the first cleared block cached.

The rules, per request:

* the fixed overhead (system prompt and tools, ``overhead_tokens``) is the same every request,
  so it is always part of the prefix;
* then the messages, compared with the previous request's in order: every message equal to
  its counterpart is prefix; at the first that differs, its leading content blocks that are
  equal are prefix too (a string content is one block), and the prefix ends there;
* the prefix's tokens are read, the rest of the request is written, so read + write is always
  the request's own token count;
* the first request reads nothing, and neither does a request sent more than ``ttl_seconds``
  after the previous one (by their recorded timestamps; an unknown time means no expiry is
  known, so the entry is taken as alive).

Simplifications, stated so nobody reads more into the figures: where a client places its
cache breakpoints is not modelled (the whole previous request counts as cached), nor the
API's minimum cacheable length, and every write is a 5-minute write. Tokens are chars at the
session's measured ratio through :func:`request_tokens`, the one conversion every strategy
uses; the read part is rounded and the write part is the rest, so the two add up exactly.

A runner calls :meth:`PrefixCache.observe` once per request per strategy over sessions with
thousands of requests and thousands of messages, so the comparison never re-serialises the
history: messages are compared by identity first (a caller never mutates a message it has
passed; a strategy that changes one builds a new dict), by equality only where they are not
the same object, and sizes are reused from the caller or from the previous request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import is_
from typing import Any

from core.measure import json_chars
from core.messages import Message

_SEPARATOR = 2  # ", " between items of a JSON array


def request_tokens(chars: int, ratio: float, overhead_tokens: int) -> int:
    """A request's input tokens: its messages' JSON chars at the session's chars-per-token
    ratio, plus the fixed overhead every request carries (system prompt and tools)."""
    return round(chars / ratio) + overhead_tokens


@dataclass(frozen=True)
class CacheSplit:
    """One request's input tokens by how the cache would bill them."""

    read: int  # served from the cache (the unchanged prefix)
    write: int  # written to the cache (5-minute writes); read + write == the request's tokens


def _parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 timestamp ("2025-10-02T09:14:03.123Z"), or None when absent or unreadable:
    an unreadable time is as unknown as a missing one."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _array_chars(sizes: Sequence[int]) -> int:
    """The JSON length of an array whose items have these lengths (``[a, b]``)."""
    return 2 + sum(sizes) + _SEPARATOR * max(len(sizes) - 1, 0)


def _content_blocks(message: Message) -> list[Any]:
    """A message's content as blocks: a string content is one block."""
    content = message.get("content")
    if isinstance(content, list):
        return content
    return [content]


def _same_but_content(old: Message, new: Message) -> bool:
    """Do two messages agree on everything except their content (the role, mostly)?"""
    if old.keys() != new.keys():
        return False
    return all(old[key] == new[key] for key in old if key != "content")


def _leading_block_chars(old: Message, new: Message) -> int:
    """The chars of ``new``'s leading content blocks equal to ``old``'s, each with its
    separator: the part of a changed message that still matches the previous request."""
    if not _same_but_content(old, new):
        return 0
    chars = 0
    for before, after in zip(_content_blocks(old), _content_blocks(new), strict=False):
        if before is not after and before != after:
            break
        chars += json_chars(before) + _SEPARATOR
    return chars


def _matching_messages(previous: list[Message], messages: list[Message]) -> int:
    """How many leading messages equal the previous request's (identity first)."""
    shared = min(len(previous), len(messages))
    if previous[:shared] == messages[:shared]:  # one C loop; identity short-cuts it
        return shared
    same = list(map(is_, previous[:shared], messages[:shared]))
    index = same.index(False)
    while index < shared:
        if not same[index] and previous[index] != messages[index]:
            return index
        index += 1
    return shared


class PrefixCache:
    """Remembers the previous request; :meth:`observe` splits the next one into read and
    written tokens. One instance per strategy: each strategy's requests form their own
    sequence."""

    def __init__(self, ratio: float, overhead_tokens: int, ttl_seconds: float = 300.0) -> None:
        if not ratio > 0:
            raise ValueError(f"chars-per-token ratio must be positive, got {ratio!r}")
        if overhead_tokens < 0:
            raise ValueError(f"overhead tokens must not be negative, got {overhead_tokens!r}")
        self.ratio = ratio
        self.overhead_tokens = overhead_tokens
        self.ttl_seconds = ttl_seconds
        self._messages: list[Message] | None = None  # the previous request's, None before one
        self._sizes: list[int] = []
        self._time: datetime | None = None

    def observe(self, messages: Sequence[Message], timestamp: str | None,
                sizes: Sequence[int] | None = None) -> CacheSplit:
        """Split this request (``messages`` sent at ``timestamp``) into read and written
        tokens, and remember it as the previous request for the next call. ``sizes``: each
        message's :func:`~core.measure.json_chars`, when the caller has them."""
        current = list(messages)
        previous = self._messages
        known = list(sizes) if sizes is not None else self._measure(current)
        if len(known) != len(current):
            raise ValueError(f"{len(known)} sizes given for {len(current)} messages")
        total = request_tokens(_array_chars(known), self.ratio, self.overhead_tokens)
        moment = _parse_time(timestamp)
        read = 0
        if previous is not None and not self._expired(moment):
            read = min(self._prefix_tokens(previous, current), total)
        self._messages, self._sizes, self._time = current, known, moment
        return CacheSplit(read=read, write=total - read)

    def _expired(self, moment: datetime | None) -> bool:
        if moment is None or self._time is None:
            return False
        return (moment - self._time).total_seconds() > self.ttl_seconds

    def _measure(self, current: list[Message]) -> list[int]:
        """Sizes for messages the caller did not measure: the previous request's where the
        same message object sits at the same place, measured otherwise."""
        previous = self._messages or []
        old = self._sizes
        shared = min(len(previous), len(current))
        same = list(map(is_, previous[:shared], current[:shared]))  # one C loop
        start = same.index(False) if False in same else shared
        rest = [old[i] if i < shared and same[i] else json_chars(message)
                for i, message in enumerate(current[start:], start)]
        return old[:start] + rest

    def _prefix_tokens(self, previous: list[Message], current: list[Message]) -> int:
        """The overhead plus the chars the two requests share from the start, as tokens.

        Whole shared messages count as the previous request sent them (its sizes), so the
        prefix never exceeds what that request held."""
        whole = _matching_messages(previous, current)
        chars = _array_chars(self._sizes[:whole]) if whole else 0
        if whole < min(len(previous), len(current)):
            chars += _leading_block_chars(previous[whole], current[whole])
        return round(chars / self.ratio) + self.overhead_tokens
