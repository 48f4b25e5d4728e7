"""The workbench: a run on the left, its context, stages, archive and memory right.

The app shows one event source (:class:`~core.sources.Source`): ctxlab's own session on a
scenario or live, a replay, a watched client. It runs the source in an async worker on its
own event loop (the engine is asyncio), so the UI never waits on it and cancelling the worker
stops the source at its next await. Every intention is a call on the source's controls
(pause, step, pace, next stage, seek, thresholds, send, finish), offered only where the
source declares them; everything the app draws comes from the source's events — never from
engine internals, never from a fake engine. Each panel handles the events it cares about
(:mod:`tui.routing`); the app hands every event to the panels it composed and draws the
header and status itself, and what a kind of source adds (its memory, its screen) comes from
:mod:`tui.source_views`. In live mode every prompt is a turn of the same session: saved after
each turn, one ``run_end`` when the workbench leaves it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Header, Input, TabbedContent, TabPane
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from core import events as ev
from core.config import Thresholds
from core.events import Emitter, Manager, RunOutcome
from core.scenarios import ScenarioError, find_scenario
from core.sources import Capability, Source
from core.sources.agent.session import DEFAULT_SESSION, AgentSession, RunOptions
from tui import panels
from tui.app_actions import WorkbenchActions
from tui.app_config import AppConfig, slug
from tui.app_learner import LearnerActions
from tui.app_nav import NavActions
from tui.app_paced import PacedRouting
from tui.app_panels import PanelActions, PanelStrip, WorkbenchTabs
from tui.cli.temp_workspaces import make_temp_workspace
from tui.collector import QuietCollector
from tui.commands import CtxlabCommands
from tui.i18n import localize_bindings, set_language, t
from tui.keymap import BINDINGS
from tui.messages import EventBridge, OpenFile
from tui.notices import CONVERSATION, keep_notices_over
from tui.pacer import Pacer
from tui.routing import Routed, RunInfo, handles
from tui.source_views import SourceView, view_for
from tui.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from tui.wide_chars import keep_wide_characters_whole
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.run_status import RunStatus
from tui.widgets.search_box import SearchBox
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.transcript_list import TranscriptList


class CtxlabApp(Routed, PacedRouting, NavActions, LearnerActions, PanelActions,
                WorkbenchActions):
    """The run, the panels and the event handlers; the keys' actions live in the base."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "ctxlab"
    COMMANDS: ClassVar = App.COMMANDS | {CtxlabCommands}
    BINDINGS: ClassVar = BINDINGS  # tui/keymap.py

    def __init__(self, config: AppConfig | None = None) -> None:
        config = config or AppConfig()
        set_language(config.lang)  # before any widget exists: they look texts up as they draw
        keep_wide_characters_whole()  # Chinese over a panel's border (tui/wide_chars.py)
        super().__init__()
        localize_bindings(self)
        self.panel_keys = panels.keys()  # each panel's digit, from its row (a panel names one)
        for name, key in self.panel_keys.items():
            self.bind(key, f"panel('{name}')", description=t(f"panel.{name}"), show=False)
        self.config = config
        self.speed = self.config.speed
        self.generation = 0
        self.source: Source | None = None  # what is shown: ctxlab's session, or another
        self.view: SourceView = view_for(None)  # what that kind of source adds
        self.bridge: EventBridge | None = None
        self.workspace = Path(".")
        self.temp_workspaces: list[Path] = []
        self.calls = 0
        self.finished = False
        self.outcome = RunOutcome()  # how the run ended: the verdict headless gives too
        self.scenario_title = ""  # "" = live mode
        self.run_breaks: tuple[str, ...] = ()  # as the run reported them (run_start)
        # who manages the context, as run_start says
        self.run_managers: tuple[str, ...] = (Manager.PIPELINE,)
        self.sent: ev.ModelRequest | None = None  # the last main call: what the model saw
        self.system_prompt: ev.SystemPrompt | None = None  # as the last main call had it
        self.run_start: ev.RunStart | None = None  # what the source said it runs
        self._views_pending = False
        self.routed: list[Routed] = []  # the app and every panel that handles events
        self.collector = QuietCollector()
        # bursts of events routed at most once a frame (tui/pacer.py)
        self.pacer = Pacer(self.route_events, self.route_text, self.set_timer,
                           lambda: self.generation, stopped=self.source_stopped)

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """The panels of :mod:`tui.panels`, each in its place: tabs on the left, the right
        column, and the right column's bottom row."""
        yield Header(icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with WorkbenchTabs(id="tabs"):
                    for panel in panels.placed("tab"):
                        with TabPane(t(f"panel.{panel.name}"), id=f"tab-{panel.name}"):
                            yield panel.make(self)
                yield SearchBox(id="search")
                if self.config.live:
                    yield Input(placeholder=t("prompt.placeholder"), id="prompt")
                yield RunStatus(id="status")
            with Vertical(id="right"):
                yield PanelStrip(id="panel-strip")
                yield from self.boxed(panels.placed("right"))
                with Horizontal(id="bottom-row"):
                    yield from self.boxed(panels.placed("bottom"))
        yield KeysFooter()

    def boxed(self, rows: list[panels.Panel]) -> Iterator[Widget]:
        """The right column's widgets; a keyed one gets the titled box every panel has."""
        for panel in rows:
            widget = panel.make(self)
            if panel.keyed:
                widget.add_class("-panel")
            yield widget

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.source_allows(action):  # the source's controls first
            return False
        if action == "hide_help":  # esc closes the keys panel, and does nothing else then
            return self.help_shown()
        return super().check_action(action, parameters)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    async def on_mount(self) -> None:
        self.routed = [self, *(w for w in self.query("*") if isinstance(w, Routed))]
        for theme in load_themes().values():
            self.register_theme(theme)
        self.theme = self.config.theme if self.config.theme in self.available_themes \
            else DEFAULT_THEME
        self.fit_layout()
        keep_notices_over(self.screen, CONVERSATION)  # never over the right column
        await self.start_run(self.config.scenario, self.config.workspace)
        if self.config.welcome and self.config.scenario is not None:
            self.show_welcome()
        self.collector.start()  # no full collection walks the app in a frame (tui.collector)

    # -- runs -----------------------------------------------------------------------------

    async def start_run(self, scenario_name: str | None, workspace: Path | None) -> None:
        """Reset every panel and start a source: the configured one (a replay, a proxy), else
        ctxlab's own session on a scenario, or live (it then waits for prompts)."""
        await self.end_session()
        self.generation += 1
        if self.config.source is not None:
            if workspace is None:
                workspace = make_temp_workspace("ctxlab-source-")
                self.temp_workspaces.append(workspace)
            self.workspace = workspace.resolve()
            source: Source = self.config.source(self.workspace)
        else:
            try:
                scenario = find_scenario(scenario_name) if scenario_name else None
            except ScenarioError as exc:
                self.notify(str(exc), title=t("notice.scenario_error"), severity="error")
                return
            if workspace is None:
                workspace = make_temp_workspace(
                    f"ctxlab-{slug(scenario.name if scenario else 'live')}-")
                self.temp_workspaces.append(workspace)
            self.workspace = workspace.resolve()
            # Live mode is one saved session (the work log's ``default`` unless named).
            source = AgentSession(RunOptions(
                workspace=self.workspace, scenario=scenario, provider=self.config.provider,
                model=self.config.model, thresholds=self.config.thresholds,
                breaks=self.config.breaks, count_tokens=self.config.count_tokens,
                record_stages=True, api_context=self.config.api_context,
                session=None if scenario else DEFAULT_SESSION, interactive=scenario is None))
        await self.show_source(source)

    async def show_source(self, source: Source) -> None:
        """The same panels for any source, its controls in the footer, then run it."""
        self.source, self.view = source, view_for(source)
        self.run_start = None
        self.scenario_title = "" if self.config.live else source.name
        if self.config.paused and source.offers(Capability.PAUSE):
            source.pause()  # opened paused, to be stepped
        self.bridge = EventBridge(self, self.generation)
        # observe first: an auto-pause must close the gate before the next model call.
        source.subscribe(Emitter(sinks=[self.observe, self.bridge]))
        self.apply_speed()
        self.calls = 0
        self.finished = False
        self.outcome = RunOutcome()
        self.run_breaks = tuple(sorted(self.config.breaks)) if self.view.own_session else ()
        self.refresh_bindings()  # its controls in the footer
        await self.reset_panels()
        await self.view.attach(self, source)
        self.fit_layout()  # a source's own panel (a replay's) may need the room of another
        self.run_source(source)
        if self.config.live:
            self.query_one("#prompt", Input).focus()

    async def reset_panels(self) -> None:
        """Every panel back to empty (a new run, or a source that went back)."""
        self.sent, self.system_prompt = None, None
        run = RunInfo(self.workspace, self.limits(), self.scripted())
        for panel in panels.PANELS:
            widget = self.query_one(f"#{panel.id}")
            if isinstance(widget, Routed):
                done = widget.reset(run)
                if done is not None:
                    await done
        self.update_header()
        self.update_status()

    def stop_run(self) -> None:
        """Cancel the work in progress and stop following the source's extras (memory)."""
        self.workers.cancel_group(self, "agent")
        if self.source is not None:
            self.view.detach(self, self.source)
        try:
            self.query_one(MemoryCatalog).show_store(None)
        except NoMatches:
            pass

    async def end_session(self) -> None:
        """End the source shown and wait until it has: an idle source that can finish
        (a live session between prompts, a watch) ends normally; one at work is cancelled
        (its ``run_end`` comes after a ``cancelled`` error)."""
        source = self.source
        running = [w for w in self.workers if w.group == "agent" and not w.is_finished]
        if source is not None and source.running and source.offers(Capability.FINISH) \
                and source.idle:
            source.finish()
            if self.source is not None:
                self.view.detach(self, self.source)
        else:
            self.stop_run()
        for worker in running:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_source(self, source: Source) -> None:
        await source.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "agent" and event.state == WorkerState.ERROR:
            error = event.worker.error
            reason = f"{type(error).__name__}: {error}"
            self.notify(t("notice.agent_stopped", error=reason), severity="error", timeout=10)
            self.outcome.error = reason  # the crash is the last error, whatever came before
            self.finished = True
            self.update_status()

    def source_stopped(self) -> bool:
        """Nothing more comes from the source until someone acts: none, ended, or waiting
        at its gate (paused, held at a replay's end, waiting for a prompt)."""
        source = self.source
        return source is None or not source.running or source.controls.asleep

    def lookup_result(self, tool_use_id: str) -> Any:
        """A tool result's original content, as the source still has it (None if unknown)."""
        return self.source.original(tool_use_id) if self.source is not None else None

    def limits(self) -> Thresholds:
        return self.source.thresholds if self.source is not None else Thresholds()

    # -- events ---------------------------------------------------------------------------

    @handles(ev.RunStart)
    def show_run_start(self, event: ev.RunStart) -> None:
        if self.source is not None:
            self.view.started(self, self.source)
        self.run_start = event
        self.outcome.see(event)
        self.run_breaks = tuple(event.breaks)
        self.run_managers = event.managers
        self.update_header()
        self.redraw_once(self.update_status)

    @handles(ev.Rewind)
    async def start_over(self, event: ev.Rewind) -> None:
        """The source went back: what follows is its stream again from the start."""
        self.calls = 0
        self.finished = False
        await self.reset_panels()
        if self.source is not None:
            await self.view.attach(self, self.source)

    @handles(ev.ModelRequest)
    def count_call(self, event: ev.ModelRequest) -> None:
        if event.purpose == "main":
            self.calls += 1
            if event.sent is not None:
                self.sent = event
                self.schedule_views()
            self.redraw_once(self.update_status)

    @handles(ev.SystemPrompt)
    def keep_system_prompt(self, event: ev.SystemPrompt) -> None:
        self.system_prompt = event

    @handles(ev.Error)
    def show_error(self, event: ev.Error) -> None:
        self.outcome.see(event)
        if event.kind != "cancelled":
            self.notify(event.message, title=t("notice.error_title", kind=event.kind),
                        severity="error", timeout=8)

    @handles(ev.RunEnd)
    def show_run_end(self, event: ev.RunEnd) -> None:
        self.outcome.see(event)
        self.finished = True
        self.redraw_once(self.update_status)
        if self.config.live:
            return
        kind = t(self.view.noun)
        if self.outcome.failure() is not None:  # as headless says it; the error said why
            text = (t("notice.failed") if self.view.own_session else
                    t("notice.failed_source", kind=kind))
            self.notify(text, title=t("notice.failed_title"), severity="error", timeout=8)
            return
        text = (t("notice.finished") if self.view.own_session else
                t("notice.finished_source", kind=kind))
        self.notify(text, title=t("notice.finished_title"), timeout=6)

    def schedule_views(self) -> None:
        """Redraw "what the model sees" at most every 50 ms (a main call's list arrived)."""
        if not self._views_pending:
            self._views_pending = True
            self.set_timer(0.05, self.refresh_views)

    async def refresh_views(self) -> None:
        self._views_pending = False
        if self.sent is None:
            return
        try:
            if self.query_one(TabbedContent).active == "tab-model":
                await self.show_model_view()
        except NoMatches:
            return

    async def show_model_view(self) -> None:
        """What the model saw on the last main call, sized as the call's event said."""
        sent = self.sent
        await self.query_one(ModelView).show(
            list(sent.sent or ()) if sent else [], sent.sent_sizes if sent else (),
            sent.chars if sent else 0)

    def on_stage_timeline_inspect(self, message: StageTimeline.Inspect) -> None:
        stage = message.record.event
        if stage.by != Manager.PIPELINE and stage.files:  # another's compaction: its summary
            self.post_message(OpenFile(stage.files[0]))
            return
        self.open_inspector(message.record)

    def on_transcript_list_open(self, message: TranscriptList.Open) -> None:
        self.post_message(OpenFile(message.rel))

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-model":
            await self.show_model_view()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        source = self.source
        if event.input.id != "prompt" or not text or source is None \
                or not source.offers(Capability.SEND):
            return
        if not source.running:  # it could not start, or it has ended
            self.notify(t("notice.finished_source", kind=t(self.view.noun)))
            return
        if not source.awaiting_prompt:
            self.notify(t("notice.agent_busy"))
            return
        event.input.value = ""
        source.send(text)

    # -- leaving ---------------------------------------------------------------------------

    async def action_quit(self) -> None:
        await self.end_session()
        self.exit(0)

    def on_unmount(self) -> None:
        self.collector.stop()
        self.stop_run()
        for path in self.temp_workspaces:
            shutil.rmtree(path, ignore_errors=True)
