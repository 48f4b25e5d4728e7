"""What the presenter's keys do: pace, views, modals, and the three teaching-lab screens.

Kept apart from :mod:`tui.app` (which owns the run and the panels) so each file reads in
one sitting. Every action here is also a command-palette entry (:mod:`tui.commands`), and
each one talks to the engine only through the source's controls (pause, step, pace, next
stage, seek, thresholds), what its events said (the system prompt) or a restart — never by
reaching into engine state.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.command import CommandPalette
from textual.screen import Screen

from core.config import Thresholds
from core.sources import Capability, Source
from core.sources.agent.session import AgentSession
from tui.i18n import has, t
from tui.messages import OpenFile, OpenText
from tui.themes import load_themes
from tui.widgets.context_meter import ContextMeter
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.run_status import next_speed
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.timeline import TimelinePanel

if TYPE_CHECKING:
    from core.events import SystemPrompt
    from tui.app import AppConfig
    from tui.source_views import SourceView

# Textual's own palette commands, by their English title and help, to message ids.
SYSTEM_TEXTS = {
    "Theme": "sys.theme", "Change the current theme": "sys.theme_help",
    "Quit": "sys.quit", "Quit the application as soon as possible": "sys.quit_help",
    "Keys": "sys.keys",
    "Show help for the focused widget and a summary of available keys": "sys.keys_show",
    "Hide the keys and widget help panel": "sys.keys_hide",
    "Minimize": "sys.minimize",
    "Minimize the widget and restore to normal size": "sys.minimize_help",
    "Maximize": "sys.maximize", "Maximize the focused widget": "sys.maximize_help",
    "Screenshot": "sys.screenshot",
    "Save an SVG 'screenshot' of the current screen": "sys.screenshot_help",
}


# Actions on ctxlab's own session: hidden while another source is shown. The memory ones
# edit or read its memory store, which a replay or a watch does not show (they did nothing).
SESSION_ONLY = frozenset({"pick_scenario", "limits", "breaks", "compare", "system_prompt",
                          "new_memory", "memory_index"})
# Actions that only mean something for a source that can pause (auto-pause pauses it).
NEEDS_PAUSE = frozenset({"toggle_auto_pause"})
# Actions that are one control of the source: offered only where the source declares it.
CONTROLS = {
    "toggle_play": Capability.PAUSE, "step": Capability.STEP,
    "faster": Capability.PACE, "slower": Capability.PACE,
    "next_compaction": Capability.NEXT_STAGE,
    "step_back": Capability.SEEK, "go_to": Capability.SEEK,
}


def system_text(text: str) -> str:
    key = SYSTEM_TEXTS.get(text)
    return t(key) if key and has(key) else text


class WorkbenchActions(App[int]):
    """The base of :class:`tui.app.CtxlabApp`, which provides the state used here."""

    if TYPE_CHECKING:
        config: AppConfig
        source: Source | None
        view: SourceView
        speed: float
        workspace: Path
        temp_workspaces: list[Path]
        system_prompt: SystemPrompt | None

        async def start_run(self, scenario_name: str | None,
                            workspace: Path | None) -> None: ...
        def update_status(self) -> None: ...
        def apply_speed(self) -> None: ...
        @property
        def paused(self) -> bool: ...
        def limits(self) -> Thresholds: ...

    def source_allows(self, action: str) -> bool:
        """Keys a source does not offer stay out of the footer: each control only where the
        source declares it, the keys that restart or reconfigure ctxlab's own session only
        for that session, and none of the keys of panels a source's own screen covers.
        (True leaves the decision to the app's other key rules.)"""
        source = self.source
        if action in CONTROLS:
            if source is None or not source.offers(CONTROLS[action]):
                return False
            if not source.running:  # a finished scripted run goes back by starting again
                return CONTROLS[action] is Capability.SEEK and self.view.own_session

            # a replay held at its end: going back is all there is to do
            return not self.at_end() or CONTROLS[action] is Capability.SEEK
        if action == "cannot_go_back":  # S and g in a live run: say why nothing happens
            return self.config.live and (source is None or not source.offers(Capability.SEEK))
        if action == "compare" and self.view.recording(source) is not None:
            return True  # a replay: what if it had run under another strategy
        if action in SESSION_ONLY:
            return self.view.own_session
        if action in NEEDS_PAUSE:
            return source is not None and source.offers(Capability.PAUSE)
        return action not in self.view.covers

    # -- pace and views ---------------------------------------------------------------------

    def at_end(self) -> bool:
        """The source has played all it has and waits, paused, to be sent back (a replay
        in the workbench)."""
        source = self.source
        return source is not None and source.running and source.idle and \
            source.offers(Capability.SEEK)

    def offered(self, capability: Capability) -> Source | None:
        """The source, when it declares ``capability`` (a palette entry can run any action)."""
        source = self.source
        return source if source is not None and source.offers(capability) else None

    def action_toggle_play(self) -> None:
        if (source := self.offered(Capability.PAUSE)) is None:
            return
        if self.paused:
            source.resume()
        else:
            source.pause()
        self.update_status()

    def action_step(self) -> None:
        if (source := self.offered(Capability.STEP)) is not None:
            source.step()
        self.update_status()

    def action_next_compaction(self) -> None:
        """Play on until the next compaction (ctxlab's, or a recorded agent's), then pause."""
        if (source := self.offered(Capability.NEXT_STAGE)) is not None:
            source.until_next_stage()
        else:
            self.notify(t("notice.no_next_stage"))
        self.update_status()

    def action_step_back(self) -> None:
        """Back to the request before the one shown (or before the one it is already
        going back to), paused there: a replay, or a scripted scenario."""
        if (source := self.seekable()) is not None:
            self.seek_to(source, max(source.heading - 1, 0))
        self.update_status()

    def action_go_to(self) -> None:
        """Ask for a request number and go there (back or forward), paused; the source
        holds still while the question is open."""
        from tui.screens.go_to import GoToScreen

        source = self.seekable()
        if source is None or isinstance(self.screen, GoToScreen):
            return
        if source.running and source.offers(Capability.PAUSE):
            source.pause()

        def chosen(position: int | None) -> None:
            if position is not None:
                self.seek_to(source, position)
            self.update_status()

        self.push_screen(GoToScreen(source.heading), chosen)

    def action_cannot_go_back(self) -> None:
        self.notify(t("notice.no_going_back"), severity="warning")

    def seekable(self) -> Source | None:
        """The source when it can go back; else None, and a notice says why (a model's
        answers differ each time: a live run cannot be played again)."""
        source = self.offered(Capability.SEEK)
        if source is None:
            self.notify(t("notice.no_going_back"), severity="warning")
        return source

    def seek_to(self, source: Source, position: int) -> None:
        """A running source seeks; a finished scripted scenario is started again in a
        fresh temporary workspace, seeking ``position`` from its first step — and so is one
        going back in a workspace the workbench did not make (going back empties the
        workspace to generate it anew: a folder someone named may hold their edits)."""
        back = position <= source.heading
        if source.running and not (back and self.in_given_workspace(source)):
            source.seek(position)
            return

        async def again() -> None:
            await self.start_run(self.config.scenario, None)
            if self.source is not None and self.source.offers(Capability.SEEK):
                self.source.seek(position)
                self.update_status()

        self.run_worker(again(), group="restart", exclusive=True)

    def in_given_workspace(self, source: Source) -> bool:
        """ctxlab's own session in a workspace the person gave (not one of ours)."""
        ours = {workspace.resolve() for workspace in self.temp_workspaces}
        return isinstance(source, AgentSession) and self.workspace not in ours

    async def on_timeline_panel_chosen(self, message: TimelinePanel.Chosen) -> None:
        """Enter on the timeline: every panel shows that request. A source that can go
        there does (a replay or a scripted demo: a seek, paused, back or forward); a live
        run, which cannot, shows it where a panel can show a past request — what the model
        saw (ctxlab's side keeps what it sent)."""
        source = self.offered(Capability.SEEK)
        if source is not None:
            if source.running and source.offers(Capability.PAUSE):
                source.pause()
            self.seek_to(source, message.index)
            self.query_one(TimelinePanel).action_newest()  # the cursor goes where it goes
            self.notify(t("notice.timeline_seek", n=message.index), timeout=3)
            self.update_status()
            return
        shown = await self.show_request(message.index)
        self.notify(t("notice.timeline_shown", n=message.index, panels=", ".join(shown))
                    if shown else t("notice.timeline_shown_none", n=message.index), timeout=4)

    async def show_request(self, index: int) -> list[str]:
        """Request ``index`` of ctxlab's side in the panels that can show a past request;
        the names of those that did. (The window view's ``show(side, index)`` joins here.)"""
        from tui.widgets.model_view import ModelView

        point = self.query_one(TimelinePanel).requests.find("ctxlab", index)
        if point is None or point.sent is None:
            return []
        await self.query_one(ModelView).show(list(point.sent), (), point.chars)
        return [t("panel.model")]

    def change_speed(self, direction: int) -> None:
        self.speed = next_speed(self.speed, direction)
        self.apply_speed()
        self.update_status()

    def action_faster(self) -> None:
        self.change_speed(+1)

    def action_slower(self) -> None:
        self.change_speed(-1)

    def action_toggle_view(self) -> None:
        from textual.widgets import TabbedContent

        tabs = self.query_one(TabbedContent)
        tabs.active = "tab-model" if tabs.active == "tab-history" else "tab-history"

    def action_next_theme(self) -> None:
        names = list(load_themes())
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]
        self.notify(t("notice.theme", theme=self.theme))

    def action_inspect(self) -> None:
        timeline = self.query_one(StageTimeline)
        if timeline.row_count:
            timeline.action_select_cursor()
        else:
            self.notify(t("notice.no_stage"))

    # -- modals that change the run -----------------------------------------------------------

    def action_pick_scenario(self) -> None:
        from tui.screens.scenario_picker import ScenarioPicker

        async def chosen(name: str | None) -> None:
            if name:
                self.config.scenario = name
                await self.start_run(name, None)

        self.push_screen(ScenarioPicker(self.config.scenario), chosen)

    def action_limits(self) -> None:
        from tui.screens.thresholds import ThresholdsScreen
        from tui.widgets.window_view import WindowView

        def apply(value: Thresholds | None) -> None:
            source = self.offered(Capability.THRESHOLDS)
            if value is None or source is None:
                return
            source.set_thresholds(value)
            self.query_one(ContextMeter).set_limits(value)
            for view in self.query(WindowView):
                view.set_limits(value)
            self.notify(t("notice.limits", limit=value.context_limit, target=value.target))

        chars = self.query_one(ContextMeter).chars
        self.push_screen(ThresholdsScreen(self.limits(), chars), apply)

    def action_breaks(self) -> None:
        """Choose break switches; the current scenario restarts with them, from scratch."""
        from tui.screens.breaks import BreaksScreen

        if isinstance(self.screen, BreaksScreen):
            return

        async def chosen(breaks: frozenset[str] | None) -> None:
            if breaks is None:
                return
            self.config.breaks = breaks
            live = self.config.scenario is None
            # A scenario replays in a fresh temporary copy; live mode keeps its directory.
            await self.start_run(self.config.scenario, self.workspace if live else None)
            self.notify(t("notice.breaks_on", switches=", ".join(sorted(breaks)))
                        if breaks else t("notice.breaks_off"))

        self.push_screen(BreaksScreen(self.config.breaks), chosen)

    # -- teaching-lab screens -----------------------------------------------------------------

    def action_compare(self) -> None:
        from core.scenarios import ScenarioError, find_scenario
        from tui.screens.compare import CompareScreen
        from tui.screens.whatif import WhatIfScreen

        if isinstance(self.screen, CompareScreen | WhatIfScreen):
            return
        recording = self.view.recording(self.source)
        if recording is not None:
            self.push_screen(WhatIfScreen(recording))
            return
        if self.config.scenario is None or not self.view.own_session:
            self.notify(t("notice.compare_live"), severity="warning")
            return
        try:
            scenario = find_scenario(self.config.scenario)
        except ScenarioError as exc:
            self.notify(str(exc), severity="error")
            return
        self.push_screen(CompareScreen(scenario, self.config.thresholds))

    def action_system_prompt(self) -> None:
        from tui.screens.system_prompt import SystemPromptScreen

        if isinstance(self.screen, SystemPromptScreen):
            return
        self.push_screen(SystemPromptScreen(self.system_prompt))

    # -- help --------------------------------------------------------------------------------

    def help_shown(self) -> bool:
        """Textual's keys panel is open on the screen in front."""
        from textual.widgets import HelpPanel

        return bool(self.screen.query(HelpPanel))

    def action_help(self) -> None:
        """``?``, F1 or ``h``: the keys that work here and what the focused panel does, in
        Textual's own keys panel (it follows the focus and the footer's bindings); the same
        key closes it again."""
        if self.help_shown():
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_hide_help(self) -> None:
        self.action_hide_help_panel()

    # -- the viewer --------------------------------------------------------------------------

    def on_open_file(self, message: OpenFile) -> None:
        from tui.screens.viewer import Viewer

        self.push_screen(Viewer.for_file(self.workspace, message.path))

    def on_open_text(self, message: OpenText) -> None:
        from tui.screens.viewer import Viewer

        self.push_screen(Viewer(message.title, message.text, message.language))

    # -- memory shortcuts (the palette reaches them without focusing the panel) ---------------

    def action_new_memory(self) -> None:
        self.query_one(MemoryCatalog).action_new()

    def action_memory_index(self) -> None:
        self.query_one(MemoryCatalog).action_index()

    # -- Textual's own palette entries, in the workbench's language ---------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            yield SystemCommand(system_text(command.title), system_text(command.help),
                                command.callback, command.discover)

    def action_command_palette(self) -> None:
        # textual types is_open's argument App[object], and App is invariant in its return type
        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]
            self.push_screen(CommandPalette(placeholder=t("palette.placeholder"),
                                            id="--command-palette"))

    def search_themes(self) -> None:
        from textual.theme import ThemeProvider

        self.push_screen(CommandPalette(providers=[ThemeProvider],
                                        placeholder=t("palette.theme_placeholder")))
