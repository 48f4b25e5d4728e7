"""The history an engine's ``prepare`` returned, recognised when it comes back longer.

An offline engine that a what-if run calls once per recorded request follows the history
instead of reading it again each time: an agent loop (and the what-if runner) adopts the
list ``prepare`` returns and appends the next messages to it, and no caller changes a
message it was given. So the list's length and its two end messages tell whether the new
call's history is the old one extended; anything else is read from the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
