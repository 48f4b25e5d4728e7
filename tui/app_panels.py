"""Panels by key, a layout that fits the terminal, the header and status line, and the
workspace path within reach.

A projector at 100 columns, a laptop at 80 or a short browser window cannot show six panels
at once, and a panel that silently vanishes is worse than a small one. So the right column
shows what the terminal's width and height allow (:mod:`tui.panel_layout`): everything, the
top panel with one other below it, or one panel at a time, under a strip that names all of
them with their keys (those in view highlighted); Tab reaches the panels out of view too,
bringing each into view. At any size ``z`` maximises the panel that has the focus and
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

from rich.cells import cell_len
from textual import events
from textual.app import App
from textual.content import Content
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Header, Input, Static, TabbedContent

from core.sources import Capability, Source
from tui import panel_layout, panels
from tui.app_config import shorten
from tui.i18n import has, t
from tui.routing import OFF
from tui.widgets.run_status import RunStatus

TAB_PADDING = 2  # a tab's cells besides its label (Textual's Tab: one each side)


class WorkbenchTabs(TabbedContent):
    """The tabs beside History: their names fitted to the row each time it is resized."""

    def on_resize(self, _: events.Resize) -> None:
        fit = getattr(self.app, "fit_tab_labels", None)
        if fit is not None:
            fit()

if TYPE_CHECKING:
    from core.events import RunOutcome, RunStart
    from tui.app import AppConfig
    from tui.source_views import SourceView

# Keys that pace a scripted run: meaningless (and hidden) in live mode.
SCRIPT_ACTIONS = {"toggle_play", "step", "faster", "slower", "next_compaction"}


class PanelStrip(Static):
    """``3 Context │ 4 Stages │ 5 Transcripts │ 6 Memory``, those in view highlighted."""

    shown: frozenset[str] = frozenset()  # the panels highlighted: those in view

    def show(self, shown: set[str]) -> None:
        self.shown = frozenset(shown)
        parts: list[Any] = []
        keys = panels.keys()
        for panel in panels.in_strip():
            if parts:
                parts.append(("│", "dim"))
            key = keys.get(panel.name)  # past the tenth keyed panel: none (the palette has it)
            label = f"{key} {t(f'panel.{panel.name}')}" if key else t(f"panel.{panel.name}")
            parts.append((label, "bold reverse $accent" if panel.name in shown
                          else "$text-muted"))
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

    mode: panel_layout.Mode = "all"
    shown_panel = "context"  # the strip panel last asked for: the one shown, one at a time
    lower_panel = ""  # the one under the top panel in the stacked layout
    _full_rows: dict[str, int] | None = None  # each right-hand widget's rows, full layout
    _phase: tuple[bool, bool] = (False, False)  # (running, at its end): the footer's keys
    _seek_watched = False  # a look at a seek's progress is due

    # -- layout -----------------------------------------------------------------------------

    @property
    def narrow(self) -> bool:
        """One right-hand panel at a time (narrow, or too short for two)."""
        return self.mode == "one"

    def on_resize(self, event: events.Resize) -> None:
        self.fit_layout(event.size)

    def fit_layout(self, size: Size | None = None) -> None:
        """The layout :func:`tui.panel_layout.choose` picks for the terminal's size."""
        size = self.size if size is None else size
        try:
            main = self.query_one("#main")
            rows = self.right_rows()
        except NoMatches:
            return
        self.mode = panel_layout.choose(size.width, size.height, rows)
        main.set_class(self.mode == "one", "-narrow")
        main.set_class(self.mode == "stacked", "-stacked")
        self.show_panel(self.shown_panel)
        self.fit_header(size.width)

    def fit_tab_labels(self) -> None:
        """Every tab's name in view where the row allows: when the full names do not fit
        beside each other, the long ones take their short form (*What the model sees* →
        *Model*), so a narrow terminal still shows that Window, Timeline, Items and Diff
        exist (a row too narrow even then scrolls to the active tab)."""
        try:
            tabs = self.query_one("#tabs", TabbedContent)
        except NoMatches:
            return
        names = [panel.name for panel in panels.placed("tab")]
        full = [t(f"panel.{name}") for name in names]
        short = [t(f"panel.{name}_short") if has(f"panel.{name}_short") else label
                 for name, label in zip(names, full, strict=True)]
        fits = sum(cell_len(label) + TAB_PADDING for label in full) <= tabs.size.width
        for name, label in zip(names, full if fits else short, strict=True):
            tab = tabs.get_tab(f"tab-{name}")
            if str(tab.label) != label:
                tab.label = label

    def right_rows(self) -> panel_layout.Rows:
        """The rows the right column's panels take in the full layout, read from the
        stylesheet once, before a layout class changes them."""
        right = panels.placed("right")
        if self._full_rows is None:
            self._full_rows = {p.name: panel_layout.full_rows(self.query_one(f"#{p.id}"))
                               for p in right}
        top_name = panel_layout.anchor()
        top = self._full_rows[top_name] + sum(
            self._full_rows[p.name] for p in right
            if not p.keyed and not self.query_one(f"#{p.id}").has_class(OFF))
        others = [self._full_rows[p.name] for p in right if p.keyed and p.name != top_name]
        return panel_layout.Rows(top, others, bool(panels.placed("bottom")))

    def panel_widget(self, name: str) -> Widget:
        """The widget of the panel called ``name`` (a tab's is the tabs it sits in)."""
        panel = panels.by_name(name)
        if panel is None or panel.place == "tab":
            return self.query_one("#tabs")
        return self.query_one(f"#{panel.id}")

    def show_panel(self, name: str) -> None:
        """Bring the strip panel ``name`` into view, as the layout allows: one at a time, or
        below the top one when stacked; the strip highlights those in view."""
        strip = panels.in_strip()
        if any(panel.name == name for panel in strip):
            self.shown_panel = name
            if name != panel_layout.anchor():
                self.lower_panel = name
        if not self.lower_panel:
            self.lower_panel = next(p.name for p in strip if p.name != panel_layout.anchor())
        shown = panel_layout.shown(self.mode, self.shown_panel, self.lower_panel)
        try:
            for panel in strip:
                self.panel_widget(panel.name).display = panel.name in shown
            for extra in panels.placed("right"):  # a source's own panel (a replay's) goes
                if not extra.keyed:  # with the top panel
                    self.query_one(f"#{extra.id}").set_class(
                        panel_layout.anchor() not in shown, "-narrow-hidden")
            self.query_one("#bottom-row").display = any(
                p.name in shown for p in panels.placed("bottom"))
            self.query_one(PanelStrip).show(shown)
        except NoMatches:
            return

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Focus moved into a panel (a click, Tab): the strip follows."""
        for each in panels.in_strip():
            try:
                panel = self.panel_widget(each.name)
            except NoMatches:
                return
            if event.widget is panel or panel in event.widget.ancestors:
                if each.name != self.shown_panel:
                    self.show_panel(each.name)
                return

    def action_focus_next(self) -> None:
        self.tab_panels(forward=True)

    def action_focus_previous(self) -> None:
        self.tab_panels(forward=False)

    def tab_panels(self, forward: bool) -> None:
        """Tab / Shift+Tab: as Textual does when every panel is in view; else through the
        panels out of view as well, each brought into view as Tab reaches it."""
        screen = self.screen
        out_of_view = self.mode != "all" and screen.maximized is None
        if not out_of_view or not screen.query("#main"):
            if forward:
                screen.focus_next()
            else:
                screen.focus_previous()
            return
        strip = {p.name: self.panel_widget(p.name) for p in panels.in_strip()}
        stops = panel_layout.tab_stops(screen.focus_chain, strip)
        target = panel_layout.step(stops, screen.focused, forward)
        if isinstance(target, str):
            self.action_panel(target)
        elif target is not None:
            target.focus()

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
        """A workspace this app, or the command that opened it (``watch``), made and removes
        on quit — not any folder under /tmp."""
        from tui.cli.temp_workspaces import tracked

        return tracked(path) or any(path == p.resolve() for p in self.temp_workspaces)

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
