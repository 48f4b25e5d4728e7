"""Panels by key, a layout that fits the terminal, the header and status line, and the
workspace path within reach.

A projector at 100 columns or a laptop at 80 cannot show six panels side by side, and a
panel that silently vanishes is worse than a small one. So below :data:`NARROW_WIDTH` the
right column shows one panel at a time, under a strip that names all of them with their keys
(the shown one highlighted); at any size ``z`` maximises the panel that has the focus and
restores it again. Every panel has a digit key (``1``, ``2``… in the order of
:mod:`tui.panels`) and a palette entry, so none is more than one key away, however many tool
calls History holds.

In live mode the prompt takes printable keys, so the footer would list keys that only
type letters; the play/step/pace keys mean nothing against a real model either. There the
footer says what works: Esc leaves the prompt (then every key works), ``/`` returns to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.content import Content
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Header, Input, Static, TabbedContent

from core.sources import Capability, Source
from tui import panels
from tui.app_config import shorten
from tui.i18n import t
from tui.widgets.run_status import RunStatus

if TYPE_CHECKING:
    from core.events import RunOutcome, RunStart
    from tui.app import AppConfig
    from tui.source_views import SourceView

NARROW_WIDTH = 140  # below: the right column shows one panel at a time
# Keys that pace a scripted run: meaningless (and hidden) in live mode.
SCRIPT_ACTIONS = {"toggle_play", "step", "faster", "slower", "next_compaction"}


class PanelStrip(Static):
    """``3 Context │ 4 Stages │ 5 Transcripts │ 6 Memory``, the shown one highlighted."""

    def show(self, current: str) -> None:
        parts: list[Any] = []
        keys = panels.keys()
        for panel in panels.in_strip():
            if parts:
                parts.append(("│", "dim"))
            label = f"{keys[panel.name]} {t(f'panel.{panel.name}')}"
            shown = panel.name == current
            parts.append((label, "bold reverse $accent" if shown else "$text-muted"))
        self.update(Content.assemble(*parts))


class PanelActions(App[int]):
    """Mixed into :class:`tui.app.CtxlabApp`: layout, panel keys, zoom, workspace path."""

    if TYPE_CHECKING:
        config: AppConfig
        workspace: Path
        temp_workspaces: list[Path]
        source: Source | None
        view: SourceView
        run_start: RunStart | None
        scenario_title: str
        run_breaks: tuple[str, ...]
        run_managers: tuple[str, ...]
        finished: bool
        outcome: RunOutcome
        speed: float
        calls: int

        def at_end(self) -> bool: ...

    narrow = False
    shown_panel = "context"
    _phase: tuple[bool, bool] = (False, False)  # (running, at its end): the footer's keys
    _seek_watched = False  # a look at a seek's progress is due

    # -- layout -----------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.fit_layout(event.size.width)

    def fit_layout(self, width: int | None = None) -> None:
        """One panel at a time on the right below :data:`NARROW_WIDTH`, all four above."""
        width = self.size.width if width is None else width
        try:
            main = self.query_one("#main")
        except NoMatches:
            return
        self.narrow = width < NARROW_WIDTH
        main.set_class(self.narrow, "-narrow")
        self.show_panel(self.shown_panel)
        self.fit_header(width)

    def panel_widget(self, name: str) -> Widget:
        """The widget of the panel called ``name`` (a tab's is the tabs it sits in)."""
        panel = panels.by_name(name)
        if panel is None or panel.place == "tab":
            return self.query_one("#tabs")
        return self.query_one(f"#{panel.id}")

    def show_panel(self, name: str) -> None:
        """In the narrow layout, make ``name`` the right column's one panel."""
        strip = panels.in_strip()
        if any(panel.name == name for panel in strip):
            self.shown_panel = name
        try:
            for panel in strip:
                self.panel_widget(panel.name).display = \
                    not self.narrow or panel.name == self.shown_panel
            for extra in panels.placed("right"):  # a source's own panel (a replay's) goes
                if not extra.keyed:  # with the Context panel when one panel is shown at a time
                    self.query_one(f"#{extra.id}").set_class(
                        self.narrow and self.shown_panel != "context", "-narrow-hidden")
            shown = panels.by_name(self.shown_panel)
            self.query_one("#bottom-row").display = not self.narrow or (
                shown is not None and shown.place == "bottom")
            self.query_one(PanelStrip).show(self.shown_panel)
        except NoMatches:
            return

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Tab into a panel in the narrow layout: the strip follows."""
        for each in panels.in_strip():
            try:
                panel = self.panel_widget(each.name)
            except NoMatches:
                return
            if event.widget is panel or panel in event.widget.ancestors:
                if each.name != self.shown_panel:
                    self.show_panel(each.name)
                return

    # -- panel keys and zoom ----------------------------------------------------------------

    def action_panel(self, name: str) -> None:
        """Bring ``name`` into view and give it the keyboard."""
        if self.screen.maximized is not None:
            self.screen.minimize()
        panel = panels.by_name(name)
        if panel is None:
            return
        if panel.place == "tab":
            self.query_one(TabbedContent).active = f"tab-{name}"
        else:
            self.show_panel(name)
        target = self.query_one(f"#{panel.id}")
        if not target.focusable:  # a container panel: the first thing in it that takes keys
            target = next((w for w in target.query("*") if w.focusable), target)
        self.call_after_refresh(target.focus)

    def focused_panel(self) -> Widget | None:
        focused = self.screen.focused
        if focused is None:
            return None
        for each in panels.keyed():
            panel = self.panel_widget(each.name)
            if focused is panel or panel in focused.ancestors:
                return panel
        return None

    def action_zoom(self) -> None:
        """Maximise the focused panel, or restore the layout when one is maximised."""
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        panel = self.focused_panel()
        if panel is None:
            self.notify(t("notice.zoom_nothing"))
            return
        self.screen.maximized = panel

    # -- live mode: the prompt and the keys that work -------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        live = self.config.live  # a prompt to type into (not a replay or a watch)
        if action in SCRIPT_ACTIONS:
            return not live
        if action == "leave_prompt":
            return live and isinstance(self.screen.focused, Input)
        if action == "to_prompt":
            return live
        return True

    def action_leave_prompt(self) -> None:
        self.query_one("#conversation").focus()

    def action_to_prompt(self) -> None:
        try:
            self.query_one("#prompt", Input).focus()
        except NoMatches:
            return

    # -- header and status line -------------------------------------------------------------

    def update_header(self) -> None:
        """Provider and model as the run reports them (``run_start``), else as configured."""
        shown = self.config.display_workspace or shorten(self.workspace,
                                                         self.is_temporary(self.workspace))
        scripted = self.config.provider == "scripted"
        said = self.run_start
        provider = (said.provider if said else None) or self.config.provider
        model = (said.model if said else None) or self.config.model or (
            "scripted" if scripted else t("header.default_model"))
        self.title = f"ctxlab · {self.scenario_title or t('header.live')}"
        sub = t("header.sub", provider=provider, model=model, workspace=shown)
        short = self.short_sub_title(provider)
        if self.run_breaks:
            broken = " · " + t("status.broken", switches=", ".join(self.run_breaks))
            sub, short = sub + broken, short + broken
        self.header_full, self.header_short = sub, short
        self.fit_header()

    def update_status(self) -> None:
        """The status line; and the footer's keys when what the source can do changed (it
        started, ended, or reached the end it holds)."""
        at_end = self.at_end()
        phase = (self.source is not None and self.source.running, at_end)
        if phase != self._phase:
            self._phase = phase
            self.refresh_bindings()
        source = self.source
        seeking = source is not None and source.running and source.seeking
        target = source.controls.target if seeking and source is not None else None
        self.query_one(RunStatus).show(finished=self.finished, live=self.config.live,
                                       paused=self.paused, speed=self.speed,
                                       calls=self.calls, breaks=self.run_breaks,
                                       managers=self.run_managers,
                                       own=self.view.own_session, at_end=at_end,
                                       failure=self.outcome.failure(),
                                       jumping=seeking, going_to=target)
        if seeking and not self._seek_watched:  # arriving emits nothing: look again
            self._seek_watched = True
            self.set_timer(0.1, self.look_again)

    def look_again(self) -> None:
        self._seek_watched = False
        try:
            self.update_status()
        except NoMatches:  # the app is closing: the status line is gone
            return

    def scripted(self) -> bool:
        """ctxlab's own session on the scripted model: no API usage will ever come."""
        return self.view.own_session and self.config.provider == "scripted"

    @property
    def paused(self) -> bool:
        return self.source.paused if self.source is not None else False

    def apply_speed(self) -> None:
        """The presenter's pace, as the source counts it (a model call, a request)."""
        if self.source is not None and self.source.offers(Capability.PACE):
            self.source.set_speed(self.speed)

    # -- the workspace path ---------------------------------------------------------------------

    def is_temporary(self, path: Path) -> bool:
        """A workspace this app made (and removes on quit) — not any folder under /tmp."""
        return any(path == p.resolve() for p in self.temp_workspaces)

    def action_copy_workspace(self) -> None:
        path = str(self.workspace)
        self.copy_to_clipboard(path)
        self.notify(path, title=t("notice.workspace_copied"), timeout=12)

    def short_sub_title(self, provider: str) -> str:
        """``scripted · temporary workspace (w: its path)``: for a narrow header."""
        workspace = self.config.display_workspace or (
            t("header.temporary_short") if self.is_temporary(self.workspace)
            else self.workspace.name)
        return t("header.sub_short", provider=provider, workspace=workspace)

    def fit_header(self, width: int | None = None) -> None:
        """The full sub-title when it fits, else provider and workspace only; the whole
        path is always in the header's tooltip (and ``w`` copies it)."""
        width = self.size.width if width is None else width
        full = getattr(self, "header_full", "")
        short = getattr(self, "header_short", "")
        title_room = len(self.title) + 3 + 8  # " — " and the header's icon and clock margin
        self.sub_title = full if title_room + len(full) <= width or not short else short
        try:
            self.query_one(Header).tooltip = t("header.tooltip", path=str(self.workspace))
        except NoMatches:
            return
