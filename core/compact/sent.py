"""The history an engine's ``prepare`` returned, recognised when it comes back longer.

An offline engine that a what-if run calls once per recorded request follows the history
instead of reading it again each time: an agent loop (and the what-if runner) adopts the
list ``prepare`` returns and appends the next messages to it, and no caller changes a
message it was given. So the list's length and its two end messages tell whether the new
call's history is the old one extended; anything else is read from the start.
:class:`FollowingCompactor` is such an engine's base.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compact.pipeline import Compactor
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import Event
from core.measure import Measured


@dataclass(frozen=True)
class Sent:
    """The history last returned: its length and its two end messages."""

    length: int = 0
    first: dict[str, Any] | None = None
    last: dict[str, Any] | None = None

    @classmethod
    def of(cls, messages: list[dict[str, Any]]) -> Sent:
        if not messages:
            return cls()
        return cls(len(messages), messages[0], messages[-1])

    def extended_by(self, messages: list[dict[str, Any]]) -> bool:
        if not self.length or len(messages) < self.length:
            return False
        return messages[0] is self.first and messages[self.length - 1] is self.last


@dataclass
class Followed:
    """An engine's followed history: the one it last returned, measured, kept up to date
    with what the caller appends to it."""

    history: Measured | None = None
    sent: Sent = field(default_factory=Sent)

    def follow(self, messages: list[dict[str, Any]]) -> tuple[Measured, int]:
        """The history to work on, and where what has not been read yet starts: the old
        one with the new messages appended (priced one by one), or ``messages`` anew."""
        history = self.history
        if history is None or not self.sent.extended_by(messages):
            self.history = Measured(list(messages))
            return self.history, 0
        start = self.sent.length
        for message in messages[start:]:
            history.append(message)
        return history, start

    def returned(self, history: Measured) -> list[dict[str, Any]]:
        """Hand ``history`` back to the caller (a list of its own: it may append to it)."""
        self.history, self.sent = history, Sent.of(history.messages)
        return list(history.messages)

    def known_sizes(self, messages: list[dict[str, Any]]) -> list[int] | None:
        """The sizes of the messages returned last, when ``messages`` extends them."""
        if self.history is None or not self.sent.extended_by(messages):
            return None
        return self.history.sizes[:self.sent.length]

    def forget(self) -> None:
        """The history was replaced outside ``prepare``: the next call reads it anew."""
        self.history, self.sent = None, Sent()


class FollowingCompactor(Compactor):
    """A compactor whose ``prepare`` follows the history it returned (the offline engines
    a what-if run calls once per recorded request); subclasses work on
    ``self.followed.follow(messages)`` and return ``self.followed.returned(history)``."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset()) -> None:
        super().__init__(workspace, thresholds, summarizer, emit, breaks)
        self.followed = Followed()

    def sizes_of(self, messages: list[dict]) -> tuple[int, ...]:
        """The sizes the followed history already holds (the agent loop asks every call)."""
        known = self.followed.known_sizes(messages)
        if known is None:
            return super().sizes_of(messages)
        return (*known, *super().sizes_of(messages[len(known):]))

    async def compact(self, messages: list[dict], active_request: str) -> list[dict]:
        self.followed.forget()  # a summary replaces the history
        return await super().compact(messages, active_request)

    async def reactive(self, messages: list[dict], active_request: str,
                       refusal: BaseException | None = None) -> list[dict]:
        self.followed.forget()
        return await super().reactive(messages, active_request, refusal)
