"""The command palette (ctrl+p): every workbench action, findable by name.

A presenter in front of a room should not have to remember keys; typing "pause", "limit"
or "projector" is enough (or "暂停", "阈值" in Chinese: titles are looked up in the UI's
language when the palette opens). Each entry runs the same app action as its key binding
and is listed only where that key is offered (the source shown declares the control), so
the two can never drift apart, and themes are listed by name so any shipped theme is one
search away.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui import panels
from tui.i18n import t
from tui.stage_filter import palette_entries
from tui.widgets.stage_timeline import StageTimeline

# (title id, action, help id): the app's actions, in the order the palette lists them.
ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("palette.play", "toggle_play", "palette.play_help"),
    ("palette.step", "step", "palette.step_help"),
    ("palette.next_compaction", "next_compaction", "palette.next_compaction_help"),
    ("palette.step_back", "step_back", "palette.step_back_help"),
    ("palette.go_to", "go_to", "palette.go_to_help"),
    ("palette.next_kind", "next_kind", "palette.next_kind_help"),
    ("palette.previous_kind", "previous_kind", "palette.previous_kind_help"),
    ("palette.meaning", "meaning", "palette.meaning_help"),
    ("palette.search", "search", "palette.search_help"),
    ("palette.faster", "faster", "palette.faster_help"),
    ("palette.slower", "slower", "palette.slower_help"),
    ("palette.view", "toggle_view", "palette.view_help"),
    ("palette.scenario", "pick_scenario", "palette.scenario_help"),
    ("palette.limits", "limits", "palette.limits_help"),
    ("palette.breaks", "breaks", "palette.breaks_help"),
    ("palette.compare", "compare", "palette.compare_help"),
    ("palette.system_prompt", "system_prompt", "palette.system_prompt_help"),
    ("palette.inspect", "inspect", "palette.inspect_help"),
    ("palette.theme_next", "next_theme", "palette.theme_next_help"),
    ("palette.new_memory", "new_memory", "palette.new_memory_help"),
    ("palette.memory_index", "memory_index", "palette.memory_index_help"),
    ("palette.zoom", "zoom", "palette.zoom_help"),
    ("palette.auto_pause", "toggle_auto_pause", "palette.auto_pause_help"),
    ("palette.copy_workspace", "copy_workspace", "palette.copy_workspace_help"),
    ("palette.help", "help", "palette.help_help"),
    ("palette.quit", "quit", "palette.quit_help"),
)


class CtxlabCommands(Provider):
    """Actions and themes for the palette."""

    def entries(self) -> list[tuple[str, Any, str]]:
        app = self.app
        out: list[tuple[str, Any, str]] = [  # what the source shown can do, as the footer
            (t(title), partial(app.run_action, action), t(help_text))
            for title, action, help_text in ACTIONS if app.check_action(action, ()) is not False
        ]
        keys = panels.keys()
        for panel in panels.keyed():  # "Go to Memory" etc.: one entry per panel, keyed or not
            name = panel.name
            out.append((t("palette.panel", name=t(f"panel.{name}")),
                        partial(app.run_action, f"panel('{name}')"),
                        t("palette.panel_help", key=keys[name]) if name in keys
                        else t("palette.panel_help_nokey")))
        for timeline in app.query(StageTimeline):  # "Stages: only snip_compact" etc.
            out += palette_entries(timeline)
        for name in getattr(app, "available_themes", {}):
            if name.startswith(("ctxlab", "projector")):
                out.append((t("palette.theme", name=name), partial(setattr, app, "theme", name),
                            t("palette.theme_help", name=name)))
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
