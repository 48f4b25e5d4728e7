"""The one-line mark a stage leaves in the History (its own module: the History and its
search both know it, and neither needs the other for it)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from core.events import Stage


class StageMark(Static):
    """The one-line mark a stage leaves in the history; Enter on it opens the inspector."""

    def __init__(self, line: Content, event: Stage) -> None:
        super().__init__(line, classes="msg-stage")
        self.event = event
