"""The card a demo opens on: what to watch, which keys step, and how to go live.

At ×1 every stage of a scenario passes in well under a minute, too fast to follow the
first time. So a demo starts paused behind this card; the learner chooses to play, to step
one model call, or to look around first. When plain ``ctxlab`` fell back to the demo
because no API key is set, the card says so, and how to run against a real model.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui import panels
from tui.i18n import localize_bindings, t

WATCH = ("welcome.watch_meter", "welcome.watch_stages", "welcome.watch_history",
         "welcome.watch_memory")
PANEL_KEYS = ""  # the digit keys, read from tui.panels when the card is drawn
KEYS = (("space", "welcome.key_play"), ("s", "welcome.key_step"),
        (PANEL_KEYS, "welcome.key_panels"), ("i", "welcome.key_inspect"),
        ("z", "welcome.key_zoom"), ("ctrl+p", "welcome.key_palette"))


def panel_keys() -> str:
    """``1–8``, or ``1–0`` once ten panels have digits: whatever tui.panels gives."""
    digits = list(panels.keys().values())
    return f"{digits[0]}–{digits[-1]}" if digits else ""


def panel_text() -> str:
    """``go to a panel (History, …)``, naming every keyed panel in key order."""
    names = [t(f"panel.{p.name}") for p in panels.keyed()]
    return t("welcome.key_panels", panels=t("welcome.list_sep").join(names))


class WelcomeCard(ModalScreen[str | None]):
    """Returns ``"play"``, ``"step"`` or None (stay paused and look around)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space,enter", "choose('play')", "key.play"),
        Binding("s", "choose('step')", "key.step"),
        Binding("escape", "choose('')", "key.close"),
    ]

    def __init__(self, scenario: str, auto_pause: bool, demo_reason: bool = False) -> None:
        super().__init__()
        localize_bindings(self)
        self.scenario = scenario
        self.auto_pause = auto_pause
        self.demo_reason = demo_reason

    def compose(self) -> ComposeResult:
        with Vertical(id="welcome-box") as box:
            box.border_title = t("welcome.title", scenario=self.scenario)
            if self.demo_reason:
                yield Static(Content.styled(t("welcome.no_key"), "bold $warning"),
                             id="welcome-no-key")
            yield Static(self.body(), id="welcome-body")
            with Horizontal(id="welcome-buttons"):
                yield Button(t("welcome.play"), variant="primary", id="play", compact=True)
                yield Button(t("welcome.step"), id="step", compact=True)
                yield Button(t("welcome.look"), id="look", compact=True)

    def body(self) -> Content:
        lines: list[Content] = [Content.styled(t("welcome.watch"), "bold")]
        lines += [Content.assemble(("  • ", "$accent"), t(key)) for key in WATCH]
        lines.append(Content(""))
        lines.append(Content.styled(t("welcome.keys"), "bold"))
        lines += [Content.assemble((f"  {key or panel_keys():<7}", "bold $accent"),
                                   panel_text() if key == PANEL_KEYS else t(text))
                  for key, text in KEYS]
        lines.append(Content(""))
        lines.append(Content.styled(t("welcome.auto_pause_on" if self.auto_pause
                                      else "welcome.auto_pause_off"), "italic"))
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        self.query_one("#play", Button).focus(scroll_visible=False)
        box = self.query_one("#welcome-box")
        self.call_after_refresh(box.scroll_home, animate=False)  # read from the top

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss({"play": "play", "step": "step"}.get(event.button.id or "") or None)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)
