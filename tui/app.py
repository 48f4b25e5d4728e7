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
import tempfile
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
from tui.commands import CtxlabCommands
from tui.messages import (
    EngineEvent,
    EventBridge,
    OpenFile,
    OpenText,
    TextChunk,
    dispatch,
)
from tui.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.run_status import RunStatus, delays, next_speed
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


def shorten(path: Path) -> str:
    text = str(path)
    home = str(Path.home())
    if text.startswith(tempfile.gettempdir()):
        return f"(temporary) {path.name}"
    return "~" + text[len(home):] if text.startswith(home) else text


def slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)[:40] or "run"


class CtxlabApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "ctxlab"
    COMMANDS: ClassVar = App.COMMANDS | {CtxlabCommands}
    BINDINGS: ClassVar = [
        Binding("space", "toggle_play", "Play/Pause"),
        Binding("s", "step", "Step"),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+"),
        Binding("minus", "slower", "Slower", key_display="-"),
        Binding("v", "toggle_view", "Model view"),
        Binding("o", "pick_scenario", "Scenario"),
        Binding("l", "limits", "Limits"),
        Binding("t", "next_theme", "Theme"),
        Binding("i", "inspect", "Inspect stage"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, config: AppConfig | None = None) -> None:
        super().__init__()
        self.config = config or AppConfig()
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
        self.scenario_title = "live"
        self._views_pending = False

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with TabbedContent(id="tabs"):
                    with TabPane("History", id="tab-history"):
                        yield Conversation(self.lookup_result, id="conversation")
                    with TabPane("What the model sees", id="tab-model"):
                        yield ModelView(id="model-view")
                if self.config.scenario is None:
                    yield Input(placeholder="Ask the agent… (Enter sends)", id="prompt")
                yield RunStatus(id="status")
            with Vertical(id="right"):
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
        await self.start_run(self.config.scenario, self.config.workspace)

    # -- runs -----------------------------------------------------------------------------

    async def start_run(self, scenario_name: str | None, workspace: Path | None) -> None:
        """Reset every panel and start a run (or, in live mode, wait for a prompt)."""
        self.stop_run()
        self.generation += 1
        try:
            scenario = find_scenario(scenario_name) if scenario_name else None
        except ScenarioError as exc:
            self.notify(str(exc), title="cannot load the scenario", severity="error")
            return
        self.scenario_title = scenario.name if scenario else "live"
        if workspace is None:
            workspace = Path(tempfile.mkdtemp(prefix=f"ctxlab-{slug(self.scenario_title)}-"))
            self.temp_workspaces.append(workspace)
        self.workspace = workspace.resolve()
        self.gate = Gate(paused=self.config.paused and scenario is not None)
        self.provider = ScriptedProvider() if self.config.provider == "scripted" else None
        options = RunOptions(workspace=self.workspace, scenario=scenario,
                             provider=self.config.provider, model=self.config.model,
                             thresholds=self.config.thresholds, breaks=self.config.breaks)
        self.bridge = EventBridge(self, self.agent_messages, self.generation)
        self.runner = Runner(options, Emitter(sinks=[self.bridge]), self.gate, self.provider)
        self.apply_speed()
        self.calls = 0
        self.finished = False
        await self.reset_panels()
        if scenario is not None:
            self.run_agent(self.runner)
        else:
            self.attach_memory()
            self.query_one("#prompt", Input).focus()

    async def reset_panels(self) -> None:
        await self.query_one(Conversation).reset()
        await self.query_one(ModelView).show([])
        self.query_one(ContextMeter).reset(self.limits())
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
            self.notify(f"the agent loop stopped: {type(error).__name__}: {error}",
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
                        return block.get("content", "")
        return None

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
        from tui.screens.inspector import Inspector

        self.push_screen(Inspector(message.record, self.workspace))

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
            self.notify("the agent is still working on the last request")
            return
        event.input.value = ""
        self.run_prompt(self.runner, text)

    # -- header and status ------------------------------------------------------------------

    def update_header(self, provider: str | None = None, model: str | None = None) -> None:
        """Provider and model as the run reports them (``run_start``), else as configured."""
        shown = self.config.display_workspace or shorten(self.workspace)
        provider = provider or (self.provider.name if self.provider else self.config.provider)
        model = model or self.config.model or ("scripted" if self.provider else "default")
        self.title = f"ctxlab · {self.scenario_title}"
        self.sub_title = f"provider {provider} · model {model} · workspace {shown}"

    def update_status(self) -> None:
        self.query_one(RunStatus).show(finished=self.finished, live=self.config.scenario is None,
                                       paused=self.gate.paused, speed=self.speed,
                                       calls=self.calls)

    # -- actions --------------------------------------------------------------------------

    def action_toggle_play(self) -> None:
        if self.gate.paused:
            self.gate.resume()
        else:
            self.gate.pause()
        self.update_status()

    def action_step(self) -> None:
        self.gate.step()
        self.update_status()

    def apply_speed(self) -> None:
        self.gate.delay, word_delay = delays(self.speed)
        if self.provider is not None:
            self.provider.word_delay = word_delay

    def change_speed(self, direction: int) -> None:
        self.speed = next_speed(self.speed, direction)
        self.apply_speed()
        self.update_status()

    def action_faster(self) -> None:
        self.change_speed(+1)

    def action_slower(self) -> None:
        self.change_speed(-1)

    def action_toggle_view(self) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.active = "tab-model" if tabs.active == "tab-history" else "tab-history"

    def action_next_theme(self) -> None:
        names = list(load_themes())
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]
        self.notify(f"theme: {self.theme}")

    def action_inspect(self) -> None:
        timeline = self.query_one(StageTimeline)
        if timeline.row_count:
            timeline.action_select_cursor()
        else:
            self.notify("no stage has fired yet")

    def action_pick_scenario(self) -> None:
        from tui.screens.scenario_picker import ScenarioPicker

        async def chosen(name: str | None) -> None:
            if name:
                self.config.scenario = name
                await self.start_run(name, None)

        self.push_screen(ScenarioPicker(self.config.scenario), chosen)

    def action_limits(self) -> None:
        from tui.screens.thresholds import ThresholdsScreen

        def apply(value: Thresholds | None) -> None:
            if value is None or self.runner is None:
                return
            self.runner.options.thresholds = value
            if self.runner.agent is not None:
                self.runner.agent.compactor.thresholds = value
            self.query_one(ContextMeter).set_limits(value)
            self.notify(f"context limit {value.context_limit:,} · target {value.target:,}"
                        " — applies at the next model call")

        chars = self.query_one(ContextMeter).chars
        self.push_screen(ThresholdsScreen(self.limits(), chars), apply)

    def action_new_memory(self) -> None:
        self.query_one(MemoryCatalog).action_new()

    def action_memory_index(self) -> None:
        self.query_one(MemoryCatalog).action_index()

    async def action_quit(self) -> None:
        self.stop_run()
        self.exit(0)

    def on_unmount(self) -> None:
        self.stop_run()
        for path in self.temp_workspaces:
            shutil.rmtree(path, ignore_errors=True)
