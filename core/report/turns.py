"""A request's turn diff from the one before it, as the watch computes it.

What changed between two consecutive requests of one side — messages appended, removed,
rewritten — is the one comparison every view uses (:func:`core.views.turn_diff.compare`),
through the watch's :func:`core.sources.watch.history_diff.diff_requests`, which also reads
what was removed or rewritten as a stage with its ledger; this module only feeds it the
messages each request sent and keeps each message's comparison key and JSON size, so a long
session is not hashed or measured again at every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.events import Stage
from core.measure import json_chars, list_chars
from core.sources.watch.history_diff import diff_requests, message_key
from core.views.requests import RequestPoint


@dataclass(frozen=True)
class TurnDiff:
    appended: int
    removed: int
    rewritten: int
    new: tuple[Any, ...]  # the appended messages, in order
    first_new: int  # the index of the first of them in the request's messages
    changes: tuple[Stage, ...]  # what the diff read as removed or rewritten, with its ledger

    @property
    def label(self) -> str:
        return f"+{self.appended} \u2212{self.removed} ~{self.rewritten}"


class Differ:
    """Turn diffs of consecutive requests; a message's key is computed once."""

    def __init__(self) -> None:
        # by identity: a request's ``sent`` shares its message objects with the next one's,
        # and the events keep every one alive, so an id is never reused meanwhile
        self._keys: dict[int, str] = {}
        self._sizes: dict[int, int] = {}

    def keys(self, messages: tuple[Any, ...]) -> list[str]:
        keys = []
        for message in messages:
            key = self._keys.get(id(message))
            if key is None:
                key = self._keys[id(message)] = message_key(message)
            keys.append(key)
        return keys

    def chars(self, messages: list[Any]) -> int:
        """``json_chars(messages)``, from each message's size measured once."""
        sizes = []
        for message in messages:
            size = self._sizes.get(id(message))
            if size is None:
                size = self._sizes[id(message)] = json_chars(message)
            sizes.append(size)
        return list_chars(sizes)

    def diff(self, prev: RequestPoint | None, cur: RequestPoint) -> TurnDiff | None:
        """The diff from ``prev`` to ``cur`` (from nothing for the first request); None when
        a request kept no messages (an event log, a recorded agent's side)."""
        if cur.sent is None or (prev is not None and prev.sent is None):
            return None
        before = list(prev.sent or ()) if prev is not None else []
        after = list(cur.sent)
        appended, removed, rewritten, changes = diff_requests(
            before, after, from_request=prev.index if prev is not None else 0,
            prev_keys=self.keys(tuple(before)), cur_keys=self.keys(cur.sent),
            chars=self.chars)
        first = len(after) - appended
        return TurnDiff(appended, removed, rewritten, tuple(after[first:]), first, changes)
