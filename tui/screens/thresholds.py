"""Edit the compaction thresholds of the running agent, so a presenter can force a stage.

The new values are checked by :meth:`core.config.Thresholds.replace` (the engine's own
rules, so the modal can never accept what the engine would refuse) and the error names the
field. They take effect at the next model call: the app hands them to the agent's compactor,
which reads its thresholds at every ``prepare()``.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from core.config import ConfigError, Thresholds
from tui.i18n import localize_bindings, t

# (threshold, label message id): the engine's names, explained in the UI's language.
FIELDS: tuple[tuple[str, str], ...] = (
    ("context_limit", "limits.context_limit"),
    ("target_ratio", "limits.target_ratio"),
    ("batch_limit", "limits.batch_limit"),
    ("large_result", "limits.large_result"),
    ("keep_recent", "limits.keep_recent"),
    ("max_messages", "limits.max_messages"),
    ("reactive_keep", "limits.reactive_keep"),
    ("summary_input_limit", "limits.summary_input_limit"),
)


class ThresholdsScreen(ModalScreen[Thresholds | None]):
    """Inputs for the main knobs; ``Apply`` returns validated thresholds."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "key.cancel"),
        Binding("ctrl+s", "apply", "key.apply"),
    ]

    def __init__(self, current: Thresholds, chars_now: int = 0) -> None:
        super().__init__()
        localize_bindings(self)
        self.current = current
        self.chars_now = chars_now

    def compose(self) -> ComposeResult:
        with Vertical(id="limits-box") as box:
            box.border_title = t("limits.title")
            with Grid(id="limits-grid"):
                for key, label in FIELDS:
                    yield Label(t(label))
                    value = getattr(self.current, key)
                    yield Input(str(value), id=f"limit-{key}",
                                type="number" if key == "target_ratio" else "integer")
            yield Static("", id="limits-error")
            with Horizontal(id="limits-buttons"):
                yield Button(t("limits.apply_button"), variant="primary", id="apply")
                yield Button(t("limits.squeeze", n=self.squeeze()), id="squeeze")
                yield Button(t("button.cancel"), id="cancel")

    def squeeze(self) -> int:
        """Half of the history now: the next call will certainly fire compaction."""
        return max(1_000, self.chars_now // 2)

    def read(self) -> Thresholds:
        changes: dict[str, int | float] = {}
        for key, _ in FIELDS:
            raw = self.query_one(f"#limit-{key}", Input).value.strip()
            try:
                changes[key] = float(raw) if key == "target_ratio" else int(raw)
            except ValueError:
                raise ConfigError(t("limits.not_number", key=key, raw=repr(raw))) from None
        return self.current.replace(**changes)

    def action_apply(self) -> None:
        try:
            value = self.read()
        except ConfigError as exc:
            self.query_one("#limits-error", Static).update(f"⚠ {exc}")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "squeeze":
            self.query_one("#limit-context_limit", Input).value = str(self.squeeze())
        else:
            self.dismiss(None)
