"""The workbench: a real agent run on the left, its context, stages, archive and memory right.

The app drives one :class:`~core.sources.agent.session.AgentSession` in an async worker on its
own event loop (the engine is asyncio), so the UI never waits on it and cancelling the worker
stops the loop at its next await. Every intention goes through the session's public methods
(pause, step, resume, pace, thresholds, send, end, recover an original); everything the app
draws comes from the session's events — never from engine internals, never from a fake
engine. Each panel handles the events it cares about (:mod:`tui.routing`); the app only
hands every event to the panels it composed, and draws the header and status itself. In
live mode every prompt is a turn of the same session: saved after each turn, one
``run_end`` when the workbench leaves it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from core import events as ev
from core.config import Thresholds
from core.events import Emitter
from core.scenarios import ScenarioError, find_scenario
from core.sources import PAUSE, EventSource, can
from core.sources.agent.session import AgentSession, RunOptions
from core.sources.agent.worklog import DEFAULT_SESSION
from core.sources.controls import Gate
from tui.app_actions import WorkbenchActions
from tui.app_config import AppConfig, shorten, slug
from tui.app_learner import LearnerActions
from tui.app_panels import PanelActions, PanelStrip
from tui.cli.temp_workspaces import make_temp_workspace
from tui.collector import QuietCollector
from tui.commands import CtxlabCommands
from tui.i18n import localize_bindings, set_language, t
from tui.messages import EngineEvents, EventBridge, OpenFile, OpenText, TextChunk
from tui.routing import Routed, handles, route_batch
from tui.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.replay_panel import ReplayPanel
from tui.widgets.run_status import SPEEDS, RunStatus, delays
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.transcript_list import TranscriptList


class CtxlabApp(Routed, LearnerActions, PanelActions, WorkbenchActions):
    """The run, the panels and the event handlers; the keys' actions live in the base."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "ctxlab"
    COMMANDS: ClassVar = App.COMMANDS | {CtxlabCommands}
    # Descriptions are message ids (tui.locales), translated per app in __init__.
    BINDINGS: ClassVar = [
        Binding("space", "toggle_play", "key.play"),
        Binding("s", "step", "key.step"),
        Binding("plus,equals_sign", "faster", "key.faster", key_display="+"),
        Binding("minus", "slower", "key.slower", key_display="-"),
        Binding("v", "toggle_view", "key.view"),
        Binding("o", "pick_scenario", "key.scenario"),
        Binding("l", "limits", "key.limits"),
        Binding("b", "breaks", "key.breaks"),
        Binding("c", "compare", "key.compare"),
        Binding("p", "system_prompt", "key.system_prompt"),
        Binding("t", "next_theme", "key.theme"),
        Binding("i", "inspect", "key.inspect"),
        Binding("n", "next_compaction", "key.next_compaction"),
        Binding("z", "zoom", "key.zoom"),
        Binding("w", "copy_workspace", "key.workspace", show=False),
        Binding("1", "panel('history')", "key.panel_history", show=False),
        Binding("2", "panel('model')", "key.panel_model", show=False),
        Binding("3", "panel('context')", "key.panel_context", show=False),
        Binding("4", "panel('stages')", "key.panel_stages", show=False),
        Binding("5", "panel('transcripts')", "key.panel_transcripts", show=False),
        Binding("6", "panel('memory')", "key.panel_memory", show=False),
        Binding("escape", "leave_prompt", "key.leave_prompt"),
        Binding("slash", "to_prompt", "key.to_prompt", key_display="/"),
        Binding("ctrl+q", "quit", "key.quit", priority=True),
        Binding("ctrl+p", "command_palette", "key.palette", show=False, priority=True,
                tooltip="key.palette_tip"),
    ]

    def __init__(self, config: AppConfig | None = None) -> None:
        config = config or AppConfig()
        set_language(config.lang)  # before any widget exists: they look texts up as they draw
        super().__init__()
        localize_bindings(self)
        self.config = config
        self.speed = self.config.speed
        self.generation = 0
        self.session: AgentSession | None = None  # ctxlab's own session, when it is shown
        self.source: EventSource | None = None  # what is shown: the session or another
        self.bridge: EventBridge | None = None
        self.workspace = Path(".")
        self.temp_workspaces: list[Path] = []
        self.calls = 0
        self.finished = False
        self.scenario_title = ""  # "" = live mode
        self.run_breaks: tuple[str, ...] = ()  # as the run reported them (run_start)
        self.run_manager = "s08"  # who manages the context, as run_start reports it
        self._views_pending = False
        self.routed: list[Routed] = []  # the app and every panel that handles events
        self.collector = QuietCollector()

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with TabbedContent(id="tabs"):
                    with TabPane(t("tab.history"), id="tab-history"):
                        yield Conversation(self.lookup_result, self.stage_why,
                                           id="conversation")
                    with TabPane(t("tab.model"), id="tab-model"):
                        yield ModelView(id="model-view")
                if self.config.live:
                    yield Input(placeholder=t("prompt.placeholder"), id="prompt")
                yield RunStatus(id="status")
            with Vertical(id="right"):
                yield PanelStrip(id="panel-strip")
                yield ContextMeter(id="context")
                yield ReplayPanel(id="replay")  # shown only when a replay starts
                yield StageTimeline(id="stages")
                with Horizontal(id="bottom-row"):
                    yield TranscriptList(id="transcripts")
                    yield MemoryCatalog(id="memory")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = self.source_allows(action)  # another event source's controls first
        return allowed if allowed is not None else super().check_action(action, parameters)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    async def on_mount(self) -> None:
        self.routed = [self, *(w for w in self.query("*") if isinstance(w, Routed))]
        for theme in load_themes().values():
            self.register_theme(theme)
        self.theme = self.config.theme if self.config.theme in self.available_themes \
            else DEFAULT_THEME
        self.fit_layout()
        await self.start_run(self.config.scenario, self.config.workspace)
        if self.config.welcome and self.config.scenario is not None:
            self.show_welcome()
        self.collector.start()  # no full collection walks the app in a frame (tui.collector)

    # -- runs -----------------------------------------------------------------------------

    async def start_run(self, scenario_name: str | None, workspace: Path | None) -> None:
        """Reset every panel and start a run (or, in live mode, wait for a prompt)."""
        await self.end_session()
        self.generation += 1
        if self.config.source is not None:
            await self.start_source(self.config.source, workspace)
            return
        try:
            scenario = find_scenario(scenario_name) if scenario_name else None
        except ScenarioError as exc:
            self.notify(str(exc), title=t("notice.scenario_error"), severity="error")
            return
        self.scenario_title = scenario.name if scenario else ""
        if workspace is None:
            workspace = make_temp_workspace(f"ctxlab-{slug(self.scenario_title or 'live')}-")
            self.temp_workspaces.append(workspace)
        self.workspace = workspace.resolve()
        gate = Gate(paused=self.config.paused and scenario is not None)
        # Live mode is one saved session (the work log's ``default`` unless named).
        options = RunOptions(workspace=self.workspace, scenario=scenario,
                             provider=self.config.provider, model=self.config.model,
                             thresholds=self.config.thresholds, breaks=self.config.breaks,
                             count_tokens=self.config.count_tokens, record_stages=True,
                             api_context=self.config.api_context,
                             session=None if scenario else DEFAULT_SESSION)
        self.session = AgentSession(options, gate=gate)
        self.source = self.session
        self.bridge = EventBridge(self, self.generation)
        # observe first: an auto-pause must close the gate before the next model call.
        self.session.subscribe(Emitter(sinks=[self.observe, self.bridge]))
        self.apply_speed()
        self.calls = 0
        self.finished = False
        self.run_breaks = tuple(sorted(self.config.breaks))  # until run_start confirms them
        await self.reset_panels()
        if scenario is not None:
            self.run_agent(self.session)
        else:
            self.attach_memory()
            self.query_one("#prompt", Input).focus()

    async def start_source(self, make: Callable[[Path], EventSource],
                           workspace: Path | None) -> None:
        """Show another event source (a replay, a proxy): the same panels, its controls."""
        if workspace is None:
            workspace = make_temp_workspace("ctxlab-source-")
            self.temp_workspaces.append(workspace)
        self.workspace = workspace.resolve()
        self.session = None
        self.source = make(self.workspace)
        if self.config.paused and can(self.source, PAUSE):
            self.source.pause()  # opened paused, to be stepped
        self.scenario_title = self.source.name
        self.refresh_bindings()  # its controls in the footer
        self.bridge = EventBridge(self, self.generation)
        self.calls = 0
        self.finished = False
        self.run_breaks = ()
        self.apply_speed()
        await self.reset_panels()
        if self.source.kind == "proxy":  # a watched client: its own screen, on this seam
            from tui.screens.watch import host_watch_screen

            await host_watch_screen(self, self.source)
        self.run_source(self.source, Emitter(sinks=[self.bridge]))

    async def reset_panels(self) -> None:
        await self.query_one(Conversation).reset()
        await self.query_one(ModelView).show([])
        self.query_one(ContextMeter).reset(self.limits(), scripted=self.scripted())
        self.query_one(StageTimeline).reset()
        self.query_one(ReplayPanel).reset()
        self.query_one(TranscriptList).reset(self.workspace)
        self.update_header()
        self.update_status()

    def stop_run(self) -> None:
        """Cancel the work in progress and stop watching memory (the session stays open)."""
        self.workers.cancel_group(self, "agent")
        if self.session is not None:
            self.session.stop_watching_memory()
        try:
            self.query_one(MemoryCatalog).reset(None)
        except NoMatches:
            pass

    async def end_session(self) -> None:
        """Stop the work in progress, wait for it to unwind, then end the session: its
        ``run_end`` is the last event, after any ``cancelled`` error."""
        running = [w for w in self.workers if w.group == "agent" and not w.is_finished]
        self.stop_run()
        for worker in running:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass
        if self.session is not None:
            await self.session.end()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_agent(self, session: AgentSession) -> None:
        await session.run()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_source(self, source: EventSource, emit: Emitter) -> None:
        await source.run(emit)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_prompt(self, session: AgentSession, text: str) -> None:
        """Live mode: every prompt is one more turn of the same session."""
        await session.send(text)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "agent" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(t("notice.agent_stopped", error=f"{type(error).__name__}: {error}"),
                        severity="error", timeout=10)
            self.finished = True
            self.update_status()

    def attach_memory(self) -> None:
        """Show the session's store in the Memory panel and follow hand edits (after the run
        prepared the folder: creating ``.memory`` first would stop the sample files being
        generated)."""
        if self.session is None:
            return
        self.query_one(MemoryCatalog).reset(self.session.memory_store)
        try:
            self.session.watch_memory()
        except OSError as exc:
            self.notify(t("mem.not_watched", error=exc), severity="warning")

    def lookup_result(self, tool_use_id: str) -> Any:
        """A tool result's original content, from the history the engine never compacts."""
        return self.session.original(tool_use_id) if self.session else None

    def limits(self) -> Thresholds:
        try:
            limits = getattr(self.source, "thresholds", None)
        except ValueError:  # a scenario's budget that does not validate
            return Thresholds()
        return limits if isinstance(limits, Thresholds) else Thresholds()

    # -- events ---------------------------------------------------------------------------

    async def on_text_chunk(self, message: TextChunk) -> None:
        if message.generation == self.generation:
            await self.query_one(Conversation).assistant(message.take())

    async def on_engine_events(self, message: EngineEvents) -> None:
        events = message.take()
        if message.generation != self.generation:
            return
        try:
            await route_batch(self.routed, events)
        except NoMatches:  # the app is shutting down: the panels are gone
            return

    @handles(ev.RunStart)
    def show_run_start(self, event: ev.RunStart) -> None:
        if self.query_one(MemoryCatalog).store is None:
            self.attach_memory()  # the run has generated and seeded the workspace by now
        self.run_breaks = tuple(event.breaks)
        self.run_manager = event.context_manager
        self.update_header(event.provider, event.model)
        self.redraw_once(self.update_status)

    @handles(ev.ModelRequest)
    def count_call(self, event: ev.ModelRequest) -> None:
        if event.purpose == "main":
            self.calls += 1
            self.redraw_once(self.update_status)

    @handles(ev.ModelResponse, ev.Stage, ev.TurnEnd)
    def views_changed(self, event: ev.Event) -> None:
        if not isinstance(event, ev.ModelResponse) or event.purpose == "main":
            self.schedule_views()

    @handles(ev.Error)
    def show_error(self, event: ev.Error) -> None:
        if event.kind != "cancelled":
            self.notify(event.message, title=t("notice.error_title", kind=event.kind),
                        severity="error", timeout=8)

    @handles(ev.RunEnd)
    def show_run_end(self, event: ev.RunEnd) -> None:
        self.finished = not self.config.live
        self.redraw_once(self.update_status)
        self.schedule_views()
        if self.finished:
            text = (t("notice.finished") if self.session is not None else
                    t("notice.finished_source", kind=getattr(self.source, "kind", "run")))
            self.notify(text, title=t("notice.finished_title"), timeout=6)

    def schedule_views(self) -> None:
        """Re-measure and redraw "what the model sees" at most every 50 ms."""
        if not self._views_pending:
            self._views_pending = True
            self.set_timer(0.05, self.refresh_views)

    def sent_messages(self) -> list[dict[str, Any]]:
        """The list the model was sent on its last call (compacted: never a raw 10 MB
        result the next ``prepare()`` is about to persist)."""
        return self.session.sent_messages() if self.session else []

    async def refresh_views(self) -> None:
        self._views_pending = False
        messages = self.sent_messages()
        if not messages:
            return
        try:
            if self.query_one(TabbedContent).active == "tab-model":
                await self.query_one(ModelView).show(messages)
        except NoMatches:
            return

    def on_open_file(self, message: OpenFile) -> None:
        from tui.screens.viewer import Viewer

        self.push_screen(Viewer.for_file(self.workspace, message.path))

    def on_open_text(self, message: OpenText) -> None:
        from tui.screens.viewer import Viewer

        self.push_screen(Viewer(message.title, message.text, message.language))

    def on_stage_timeline_inspect(self, message: StageTimeline.Inspect) -> None:
        stage = message.record.event
        if stage.by != "ctxlab" and stage.files:  # another agent's compaction: its summary
            self.post_message(OpenFile(stage.files[0]))
            return
        self.open_inspector(message.record)

    def on_transcript_list_open(self, message: TranscriptList.Open) -> None:
        self.post_message(OpenFile(message.rel))

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-model":
            await self.query_one(ModelView).show(self.sent_messages())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if event.input.id != "prompt" or not text or self.session is None:
            return
        if any(w.is_running for w in self.workers if w.group == "agent"):
            self.notify(t("notice.agent_busy"))
            return
        event.input.value = ""
        self.run_prompt(self.session, text)

    # -- header and status ------------------------------------------------------------------

    def update_header(self, provider: str | None = None, model: str | None = None) -> None:
        """Provider and model as the run reports them (``run_start``), else as configured."""
        shown = self.config.display_workspace or shorten(self.workspace,
                                                         self.is_temporary(self.workspace))
        scripted = self.config.provider == "scripted"
        provider = provider or self.config.provider
        model = model or self.config.model or ("scripted" if scripted
                                                else t("header.default_model"))
        self.title = f"ctxlab · {self.scenario_title or t('header.live')}"
        sub = t("header.sub", provider=provider, model=model, workspace=shown)
        short = self.short_sub_title(provider)
        if self.run_breaks:
            broken = " · " + t("status.broken", switches=", ".join(self.run_breaks))
            sub, short = sub + broken, short + broken
        self.header_full, self.header_short = sub, short
        self.fit_header()

    def update_status(self) -> None:
        self.query_one(RunStatus).show(finished=self.finished, live=self.config.live,
                                       paused=self.paused, speed=self.speed,
                                       calls=self.calls, breaks=self.run_breaks,
                                       manager=self.run_manager,
                                       own=self.session is not None)

    def scripted(self) -> bool:
        """ctxlab's own session on the scripted model: no API usage will ever come."""
        return self.session is not None and self.config.provider == "scripted"

    @property
    def paused(self) -> bool:
        return bool(getattr(self.source, "paused", False))

    def apply_speed(self) -> None:
        if self.session is not None:
            self.session.set_pace(*delays(self.speed))
        elif self.source is not None and hasattr(self.source, "speed"):
            # a replay: requests per second (top: no pause)
            self.source.speed = 0.0 if self.speed >= SPEEDS[-1] else self.speed

    # -- leaving ---------------------------------------------------------------------------

    async def action_quit(self) -> None:
        await self.end_session()
        self.exit(0)

    def on_unmount(self) -> None:
        self.collector.stop()
        self.stop_run()
        for path in self.temp_workspaces:
            shutil.rmtree(path, ignore_errors=True)
