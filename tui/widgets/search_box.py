"""The search box over the History and the Stages: ``ctrl+f`` opens it, typing narrows both
panels as the query changes, the count says how many rows match in each, Esc clears it.

The box only says what was asked (:class:`SearchBox.Changed`); the app narrows the panels
(:mod:`tui.app_nav`), so the box knows nothing of them.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from tui.i18n import localize_bindings, t
from tui.nav_search import Query, parse


class SearchBox(Horizontal):
    """An input and the count of matches; hidden until opened."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear", "key.search_clear", priority=True),
    ]
    DEFAULT_CSS = """
    SearchBox { height: 1; background: $panel; }
    SearchBox #search-input { width: 1fr; }
    SearchBox #search-count { width: auto; padding: 0 1; color: $text-muted; }
    """

    class Changed(Message):
        """The query changed (an empty query: the panels show everything again)."""

        def __init__(self, query: Query) -> None:
            super().__init__()
            self.query = query

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.display = False

    def compose(self) -> ComposeResult:
        yield Input(placeholder=t("search.placeholder"), id="search-input", compact=True)
        yield Static("", id="search-count", markup=False)

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    def open(self) -> None:
        self.display = True
        self.input.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(parse(event.value)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # not a prompt: the app's prompt handler must not see it

    def show_count(self, history: int, stages: int, query: Query) -> None:
        self.query_one("#search-count", Static).update(
            "" if query.empty else t("search.count", history=history, stages=stages))

    def action_clear(self) -> None:
        """Esc: the query gone, every row back, the box closed."""
        self.input.value = ""
        self.post_message(self.Changed(Query()))
        self.display = False
        self.app.set_focus(None)
