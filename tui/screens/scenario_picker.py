"""Pick a bundled scenario; the app restarts it in a fresh temporary workspace."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.scenarios import ScenarioError, bundled_names, find_scenario
from tui.i18n import localize_bindings, t


def scenario_options() -> list[Option]:
    """One option per bundled scenario, with its title (a broken file says why)."""
    options = []
    for name in bundled_names():
        try:
            title = find_scenario(name).title
        except ScenarioError as exc:
            title = t("picker.cannot_load", error=exc)
        options.append(Option(f"{name}  —  {title}" if title else name, id=name))
    return options


class ScenarioPicker(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "key.cancel")]

    def __init__(self, current: str | None) -> None:
        super().__init__()
        localize_bindings(self)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box") as box:
            box.border_title = t("picker.title")
            yield Static(t("picker.note"), id="picker-note")
            options = scenario_options()
            yield OptionList(*options, id="picker-list")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        names = [o.id for o in listing.options]
        if self.current in names:
            listing.highlighted = names.index(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
