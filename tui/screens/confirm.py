"""A yes/no question, for the workbench's destructive actions (deleting a memory, throwing
away an edit): the buttons name what each answer does, not just "yes" and "no"."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.i18n import localize_bindings, t


class Confirm(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "answer(False)", "key.no"),
        Binding("y", "answer(True)", "key.yes"),
    ]

    def __init__(self, question: str, yes: str | None = None, no: str | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.question = question
        self.yes_label = yes or t("confirm.delete")
        self.no_label = no or t("confirm.keep")

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.yes_label, variant="error", id="yes")
                yield Button(self.no_label, variant="primary", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
