"""The workbench: a real agent run on the left, its context, stages, archive and memory right.

The app drives the engine's :class:`~core.run.Runner` in an async worker on its own event
loop (the engine is asyncio), so the UI never waits on it and cancelling the worker stops the
loop at its next await. The UI talks back to the engine only through the
:class:`~core.gate.Gate` (play, pause, step, pace), the provider's ``word_delay``, the
compactor's thresholds, and cancellation. Everything it draws comes from events (see
:mod:`tui.messages`) plus reads of ``runner.agent.messages`` — never from a fake engine.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from core import events as ev
from core.config import Thresholds
from core.events import Emitter
from core.gate import Gate
from core.providers.base import ProviderError
from core.providers.scripted import ScriptedProvider
from core.run import Runner, RunOptions
from core.scenarios import DEFAULT_SCENARIO, ScenarioError, find_scenario
from tui.app_actions import WorkbenchActions
from tui.app_learner import LearnerActions
from tui.app_panels import PanelActions, PanelStrip
from tui.commands import CtxlabCommands
from tui.i18n import localize_bindings, set_language, t
from tui.messages import (
    EngineEvent,
    EventBridge,
    OpenFile,
    OpenText,
    TextChunk,
    dispatch,
)
from tui.temp_workspaces import make_temp_workspace
from tui.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.run_status import RunStatus, delays
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.transcript_list import TranscriptList


@dataclass
class AppConfig:
    """How to open the workbench (``ctxlab demo`` flags, or a test's fixed settings)."""

    scenario: str | None = DEFAULT_SCENARIO  # None: live mode with a prompt
    workspace: Path | None = None  # None: a fresh temporary copy per scenario
    theme: str = DEFAULT_THEME
    speed: float = 1.0
    paused: bool = False
    provider: str = "scripted"
    model: str | None = None
    display_workspace: str | None = None  # shown instead of the path (stable screenshots)
    thresholds: Thresholds | None = None
    breaks: frozenset[str] = field(default_factory=frozenset)
    lang: str = "en"
    count_tokens: bool = False  # live mode: the API's token count beside the estimate
    welcome: bool = False  # open on the welcome card (the run waits behind it, paused)
    auto_pause: bool = False  # pause the first time each kind of stage fires
    demo_reason: bool = False  # plain `ctxlab` without a key: the card says why and how to go live


def shorten(path: Path, temporary: bool = False) -> str:
    """``(temporary) name`` only for a workspace the app made itself; ``~/…`` under home."""
    text = str(path)
    home = str(Path.home())
    if temporary:
        return t("header.temporary", name=path.name)
    return "~" + text[len(home):] if text.startswith(home) else text


def slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)[:40] or "run"


class CtxlabApp(LearnerActions, PanelActions, WorkbenchActions):
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
        self.runner: Runner | None = None
        self.gate = Gate()
        self.provider: ScriptedProvider | None = None
        self.bridge: EventBridge | None = None
        self.workspace = Path(".")
        self.temp_workspaces: list[Path] = []
        self.calls = 0
        self.finished = False
        self.scenario_title = ""  # "" = live mode
        self.run_breaks: tuple[str, ...] = ()  # as the run reported them (run_start)
        self._views_pending = False

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with TabbedContent(id="tabs"):
                    with TabPane(t("tab.history"), id="tab-history"):
                        yield Conversation(self.lookup_result, id="conversation")
                    with TabPane(t("tab.model"), id="tab-model"):
                        yield ModelView(id="model-view")
                if self.config.scenario is None:
                    yield Input(placeholder=t("prompt.placeholder"), id="prompt")
                yield RunStatus(id="status")
            with Vertical(id="right"):
                yield PanelStrip(id="panel-strip")
                yield ContextMeter(id="context")
                yield StageTimeline(id="stages")
                with Horizontal(id="bottom-row"):
                    yield TranscriptList(id="transcripts")
                    yield MemoryCatalog(id="memory")
        yield Footer()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    async def on_mount(self) -> None:
        for theme in load_themes().values():
            self.register_theme(theme)
        self.theme = self.config.theme if self.config.theme in self.available_themes \
            else DEFAULT_THEME
        self.fit_layout()
        await self.start_run(self.config.scenario, self.config.workspace)
        if self.config.welcome and self.config.scenario is not None:
            self.show_welcome()

    # -- runs -----------------------------------------------------------------------------

    async def start_run(self, scenario_name: str | None, workspace: Path | None) -> None:
        """Reset every panel and start a run (or, in live mode, wait for a prompt)."""
        self.stop_run()
        self.generation += 1
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
        self.gate = Gate(paused=self.config.paused and scenario is not None)
        self.provider = ScriptedProvider() if self.config.provider == "scripted" else None
        options = RunOptions(workspace=self.workspace, scenario=scenario,
                             provider=self.config.provider, model=self.config.model,
                             thresholds=self.config.thresholds, breaks=self.config.breaks,
                             count_tokens=self.config.count_tokens)
        self.bridge = EventBridge(self, self.agent_messages, self.generation, self.observe)
        self.runner = Runner(options, Emitter(sinks=[self.bridge]), self.gate, self.provider)
        self.apply_speed()
        self.calls = 0
        self.finished = False
        self.run_breaks = tuple(sorted(self.config.breaks))  # until run_start confirms them
        await self.reset_panels()
        if scenario is not None:
            self.run_agent(self.runner)
        else:
            self.attach_memory()
            self.query_one("#prompt", Input).focus()

    async def reset_panels(self) -> None:
        await self.query_one(Conversation).reset()
        await self.query_one(ModelView).show([])
        self.query_one(ContextMeter).reset(self.limits(), scripted=self.provider is not None)
        self.query_one(StageTimeline).reset()
        self.query_one(TranscriptList).reset(self.workspace)
        self.update_header()
        self.update_status()

    def stop_run(self) -> None:
        self.workers.cancel_group(self, "agent")
        try:
            self.query_one(MemoryCatalog).unwatch()
        except NoMatches:
            pass

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_agent(self, runner: Runner) -> None:
        await runner.run()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_prompt(self, runner: Runner, text: str) -> None:
        """Live mode: the first prompt starts the run, later ones continue its agent."""
        if runner.agent is None:
            runner.options.prompts = [text]
            await runner.run()
            return
        try:
            await runner.agent.run_turn(text)
        except ProviderError as exc:
            runner.emit(ev.Error(message=str(exc).splitlines()[0], kind=exc.kind))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "agent" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(t("notice.agent_stopped", error=f"{type(error).__name__}: {error}"),
                        severity="error", timeout=10)
            self.finished = True
            self.update_status()

    def attach_memory(self) -> None:
        """Open the workspace's store in the Memory panel, watched (after the run prepared
        the folder: creating ``.memory`` first would stop the sample files being generated)."""
        if self.bridge is not None:
            self.query_one(MemoryCatalog).watch(self.workspace / ".memory", self.bridge.post)

    def agent_messages(self) -> list[dict[str, Any]] | None:
        agent = self.runner.agent if self.runner else None
        return agent.messages if agent is not None else None

    def lookup_result(self, tool_use_id: str) -> Any:
        """A tool result's original content, from the history the engine never compacts."""
        agent = self.runner.agent if self.runner else None
        for message in reversed(agent.full_history if agent else []):
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("tool_use_id") == tool_use_id:
                        return self.original(tool_use_id, block.get("content", ""))
        return None

    def original(self, tool_use_id: str, content: Any) -> Any:
        """The agent holds persisted results as pointers: read the original back from disk."""
        archive = self.runner.agent.compactor.archive if self.runner and self.runner.agent \
            else None
        path = archive.trusted_pointer(tool_use_id, content) if archive else None
        return archive.read_result(path) if archive and path else content

    def limits(self) -> Thresholds:
        if self.runner is None:
            return Thresholds()
        if self.runner.agent is not None:
            return self.runner.agent.compactor.thresholds
        try:
            return self.runner.thresholds()
        except ValueError:
            return Thresholds()

    # -- events ---------------------------------------------------------------------------

    async def on_text_chunk(self, message: TextChunk) -> None:
        if message.generation == self.generation:
            await self.query_one(Conversation).assistant(message.take())

    async def on_engine_event(self, message: EngineEvent) -> None:
        if message.generation != self.generation:
            return
        try:
            await dispatch(self, message.event)
        except NoMatches:  # the app is shutting down: the panels are gone
            return

    def schedule_views(self) -> None:
        """Re-measure and redraw "what the model sees" at most every 50 ms."""
        if not self._views_pending:
            self._views_pending = True
            self.set_timer(0.05, self.refresh_views)

    def sent_messages(self) -> list[dict[str, Any]]:
        """The list the model was sent on its last call (compacted: never a raw 10 MB
        result the next ``prepare()`` is about to persist)."""
        return (self.bridge.stage_log.last_sent if self.bridge else None) or []

    async def refresh_views(self) -> None:
        self._views_pending = False
        messages = self.sent_messages()
        if not messages:
            return
        try:
            self.query_one(ContextMeter).measure(messages)
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
        self.open_inspector(message.record)

    def on_transcript_list_open(self, message: TranscriptList.Open) -> None:
        self.post_message(OpenFile(message.rel))

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-model":
            await self.query_one(ModelView).show(self.sent_messages())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if event.input.id != "prompt" or not text or self.runner is None:
            return
        if any(w.is_running for w in self.workers if w.group == "agent"):
            self.notify(t("notice.agent_busy"))
            return
        event.input.value = ""
        self.run_prompt(self.runner, text)

    # -- header and status ------------------------------------------------------------------

    def update_header(self, provider: str | None = None, model: str | None = None) -> None:
        """Provider and model as the run reports them (``run_start``), else as configured."""
        shown = self.config.display_workspace or shorten(self.workspace,
                                                         self.is_temporary(self.workspace))
        provider = provider or (self.provider.name if self.provider else self.config.provider)
        model = model or self.config.model or ("scripted" if self.provider
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
        self.query_one(RunStatus).show(finished=self.finished, live=self.config.scenario is None,
                                       paused=self.gate.paused, speed=self.speed,
                                       calls=self.calls, breaks=self.run_breaks)

    def apply_speed(self) -> None:
        self.gate.delay, word_delay = delays(self.speed)
        if self.provider is not None:
            self.provider.word_delay = word_delay

    # -- leaving ---------------------------------------------------------------------------

    async def action_quit(self) -> None:
        self.stop_run()
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop_run()
        for path in self.temp_workspaces:
            shutil.rmtree(path, ignore_errors=True)
