"""The command palette (ctrl+p): every workbench action, findable by name.

A presenter in front of a room should not have to remember keys; typing "pause", "limit"
or "projector" is enough. Each entry runs the same app action as its key binding, so the
two can never drift apart, and themes are listed by name so any shipped theme is one
search away.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (title, action, help): the app's actions, in the order the palette lists them.
ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Play / pause", "toggle_play", "Pause or resume the agent before its next model call"),
    ("Step one model call", "step", "Let exactly one more model call through, then pause"),
    ("Faster", "faster", "Shorter pauses between calls and faster streaming"),
    ("Slower", "slower", "Longer pauses between calls and slower streaming"),
    ("Toggle what the model sees", "toggle_view",
     "Switch between the full history and the list the model is sent"),
    ("Play another scenario", "pick_scenario",
     "Restart with a bundled scenario in a fresh temporary workspace"),
    ("Edit thresholds", "limits", "Change the context limit and friends to force a stage"),
    ("Inspect the selected stage", "inspect", "Before/after and ledger of one stage"),
    ("Next theme", "next_theme", "Cycle through the shipped themes"),
    ("New memory record", "new_memory", "Write a record in the built-in editor"),
    ("Show MEMORY.md", "memory_index", "The derived memory index"),
    ("Quit", "quit", "Leave ctxlab (a running turn is cancelled cleanly)"),
)


class CtxlabCommands(Provider):
    """Actions and themes for the palette."""

    def entries(self) -> list[tuple[str, Any, str]]:
        app = self.app
        out: list[tuple[str, Any, str]] = [
            (title, partial(app.run_action, action), help_text)
            for title, action, help_text in ACTIONS
        ]
        for name in getattr(app, "available_themes", {}):
            if name.startswith(("ctxlab", "projector")):
                out.append((f"Theme: {name}", partial(setattr, app, "theme", name),
                            f"Switch to the {name} theme"))
        return out

    async def discover(self) -> Hits:
        for title, command, help_text in self.entries():
            yield DiscoveryHit(title, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_text in self.entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)
