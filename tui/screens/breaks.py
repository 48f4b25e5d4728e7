"""Break switches (teaching lab): turn protections of the pipeline off, then replay.

Each name in :data:`core.config.BREAK_SWITCHES` disables exactly one protection,
so a class can watch what it was protecting against (see docs/TEACHING.md). On screen each
switch *is* the protection — on while it protects, off once broken — and the word beside it
says which: a switch marked "ON" beside ``pair-protection`` read as "the protection is on"
when it meant the opposite. A switch changes
how the engine behaves from the first call, so applying them restarts the current scenario
from scratch, in a fresh temporary workspace — the modal returns the chosen set and the app
does the restart. The switch names stay as on the command line (``--break NAME``) in every
language; what each protects is explained beside it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static, Switch

from core.config import BREAK_SWITCHES
from tui.i18n import localize_bindings, t


def state_text(protected: bool) -> Content:
    """The protection's state in words and a mark, not in colour only (a projector, colour
    blindness, a monochrome terminal)."""
    return Content.styled(t("breaks.protected"), "$text-muted") if protected else \
        Content.styled(t("breaks.broken"), "bold $warning")


class BreaksScreen(ModalScreen[frozenset[str] | None]):
    """A switch per protection; ``Apply`` returns the names of those turned off, the
    break switches of the command line (None: cancelled)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "key.cancel"),
        Binding("ctrl+s", "apply", "key.restart"),
    ]

    def __init__(self, current: frozenset[str]) -> None:
        super().__init__()
        localize_bindings(self)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="breaks-box") as box:
            box.border_title = t("breaks.title")
            yield Static(t("breaks.note"), id="breaks-note")
            for name in BREAK_SWITCHES:
                with Horizontal(classes="break-row"):
                    yield Switch(value=name not in self.current, id=f"protect-{name}")
                    yield Static(state_text(name not in self.current), id=f"state-{name}",
                                 classes="break-state")
                    yield Static(Content.assemble(
                        (name, "bold"), "\n",
                        (t("breaks.protects"), "dim bold"), (t(f"break.{name}"), "dim"),
                        "\n", (t("breaks.off"), "bold $warning"),
                        t(f"break.{name}.off")), classes="break-text")
            with Horizontal(id="breaks-buttons"):
                yield Button(t("breaks.apply"), variant="warning", id="apply")
                yield Button(t("breaks.none"), id="none")
                yield Button(t("button.cancel"), id="cancel")

    def on_mount(self) -> None:
        self.query_one(Switch).focus()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        name = (event.switch.id or "").removeprefix("protect-")
        self.query_one(f"#state-{name}", Static).update(state_text(event.value))

    def chosen(self) -> frozenset[str]:
        return frozenset(name for name in BREAK_SWITCHES
                         if not self.query_one(f"#protect-{name}", Switch).value)

    def action_apply(self) -> None:
        self.dismiss(self.chosen())

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "none":
            for switch in self.query(Switch):
                switch.value = True
        else:
            self.dismiss(None)
