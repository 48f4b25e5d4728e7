"""Textual's ``Footer``, rebuilt only when the keys it shows change.

``Footer`` removes every key and mounts them all again whenever the screen's bindings may
have changed: a focus moving between panels, a run starting, a source reaching its end, a
panel asking the footer to look again. Each rebuild is a layout of the screen and a
render of every key, and most change nothing shown: the same keys, labels and states.
Here the rebuild happens only when what ``Footer.compose`` would show differs from what
it showed last.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.binding import Binding
from textual.widgets import Footer


class KeysFooter(Footer):
    """A ``Footer`` that skips a rebuild showing the keys it already shows."""

    _shown: Hashable | None = None

    def shown_keys(self) -> Hashable:
        """Everything ``Footer.compose`` reads to draw the keys: each binding shown (key,
        its display, label, action, group, enabled, tooltip), and the command palette's
        binding, which it draws whether or not that binding is shown."""
        app = self.app
        active = self.screen.active_bindings

        def drawn(binding: Binding, enabled: bool, tooltip: str) -> Hashable:
            return (binding.key, app.get_key_display(binding), binding.description,
                    binding.action, binding.group, enabled, tooltip, binding.tooltip)

        keys = tuple(drawn(binding, enabled, tooltip)
                     for _node, binding, enabled, tooltip in active.values() if binding.show)
        palette = active.get(app.COMMAND_PALETTE_BINDING)
        return (keys, drawn(*palette[1:]) if palette else None, self.show_command_palette,
                app.ENABLE_COMMAND_PALETTE)

    async def recompose(self) -> None:
        if not self.is_attached or not self._bindings_ready:
            await super().recompose()
            return
        keys = self.shown_keys()
        if keys == self._shown:
            return
        self._shown = keys
        await super().recompose()
