"""Go to a request of a replay: one number, then the replay is there, paused.

Going back is as cheap as going forward: the replay re-emits what it already played instead
of running the pipeline again (:mod:`core.sources.replay.source`), so a learner can jump to
the request before a compaction and step through it as often as they like.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui.i18n import localize_bindings, t


class GoToScreen(ModalScreen[int | None]):
    """An integer input; Enter returns the request number, Escape nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "key.cancel")]

    def __init__(self, current: int) -> None:
        super().__init__()
        localize_bindings(self)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-box") as box:
            box.border_title = t("goto.title")
            yield Static(t("goto.help", current=self.current), id="goto-help")
            yield Input(str(self.current), type="integer", id="goto-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.dismiss(max(int(event.value), 0))
        except ValueError:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
