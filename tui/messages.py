"""Textual messages the workbench passes around, and the sink that turns engine events into them.

The engine's emitter calls :class:`EventBridge` synchronously, from inside the agent loop
(which runs as an async worker on the app's own event loop). The bridge therefore does only
two cheap things there and then, and leaves all drawing to message handlers:

* it feeds the :class:`~tui.screens.stage_diff.StageLog`, which must see
  ``runner.agent.messages`` *at the moment* a stage fires (later it has moved on);
* it posts one message per event, except streamed text: consecutive ``assistant_text``
  deltas are appended to one open :class:`TextChunk` until any other event seals it, so a
  fast stream costs one message per burst and text never overtakes a later tool call.

The memory watcher reports from its own thread straight to the Memory panel with
``post_message``, which is thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.message import Message
from textual.message_pump import MessagePump

from core.events import AssistantText, Event
from tui.screens.stage_diff import StageLog


class EngineEvent(Message):
    """One event from the agent loop (``assistant_text`` travels as :class:`TextChunk`)."""

    def __init__(self, event: Event, generation: int) -> None:
        super().__init__()
        self.event = event
        self.generation = generation


class TextChunk(Message):
    """Streamed assistant text; ``parts`` grows until the handler :meth:`take` s it."""

    def __init__(self, generation: int) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.taken = False
        self.generation = generation

    def take(self) -> str:
        """The text so far; later deltas go to a new chunk (same thread, so no race)."""
        self.taken = True
        return "".join(self.parts)


class MemoryChanged(Message):
    """The memory watcher rebuilt the index after files changed on disk (any thread)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class OpenFile(Message):
    """Ask the app to open a workspace-relative file in the viewer."""

    def __init__(self, path: str, title: str | None = None) -> None:
        super().__init__()
        self.path = path
        self.title = title


class OpenText(Message):
    """Ask the app to show some text (a tool result, a message) in the viewer."""

    def __init__(self, title: str, text: str, language: str | None = None) -> None:
        super().__init__()
        self.title = title
        self.text = text
        self.language = language


class EventBridge:
    """The engine-side sink: snapshot for the stage log, then post a message to ``target``.

    ``generation`` tags every message with the run that produced it, so events of a run
    cancelled by a restart are dropped instead of drawn into the new run's panels.
    """

    def __init__(self, target: MessagePump, messages: Callable[[], list[dict[str, Any]] | None],
                 generation: int, observe: Callable[[Event], None] | None = None) -> None:
        self.target = target
        self.observe = observe  # sees each event synchronously (auto-pause, sessions)
        self.messages = messages
        self.generation = generation
        self.stage_log = StageLog()
        self._chunk: TextChunk | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantText):
            if self._chunk is None or self._chunk.taken:
                self._chunk = TextChunk(self.generation)
                self.target.post_message(self._chunk)
            self._chunk.parts.append(event.delta)
            return
        self._chunk = None
        self.stage_log.observe(event, self.messages())
        if self.observe is not None:
            self.observe(event)
        self.post(event)

    def post(self, event: Event) -> None:
        """Post without feeding the stage log (events of the UI's own memory store)."""
        self.target.post_message(EngineEvent(event, self.generation))


# -- applying events to the panels ----------------------------------------------------------


async def dispatch(app: Any, event: Event) -> None:
    """Update the panels for one engine event (``app`` is the running ``CtxlabApp``).

    Kept beside the messages so the whole path — engine event, sink, message, panels — reads
    in one file; widget classes are imported here, at call time, because they import this
    module for their own messages.
    """
    from core import events as ev
    from tui.i18n import t
    from tui.widgets.context_meter import ContextMeter
    from tui.widgets.conversation import Conversation
    from tui.widgets.memory_catalog import MemoryCatalog
    from tui.widgets.stage_timeline import StageTimeline
    from tui.widgets.transcript_list import TranscriptList

    conversation = app.query_one(Conversation)
    meter = app.query_one(ContextMeter)
    memory = app.query_one(MemoryCatalog)
    if isinstance(event, ev.RunStart):
        if memory.store is None:
            app.attach_memory()  # the run has generated and seeded the workspace by now
        app.run_breaks = tuple(event.breaks)
        app.update_header(event.provider, event.model)
        app.update_status()
    elif isinstance(event, ev.SessionStart):
        if event.session > 1:  # a divider where the next session's fresh history starts
            await conversation.divider(event.session, event.sessions)
    elif isinstance(event, ev.TurnStart):
        await conversation.user(event.request)
    elif isinstance(event, ev.SystemPrompt):
        meter.system(event.sections)
    elif isinstance(event, ev.ModelRequest) and event.purpose == "main":
        app.calls += 1
        meter.model_request(event.chars, event.est_tokens, event.counted_tokens)
        app.update_status()
    elif isinstance(event, ev.ModelResponse) and event.purpose == "main":
        await conversation.end_assistant()
        meter.usage(event.usage)
        app.schedule_views()
    elif isinstance(event, ev.ToolCall):
        await conversation.tool_call(event)
    elif isinstance(event, ev.ToolResult):
        conversation.tool_result(event)
    elif isinstance(event, ev.Stage):
        record = next((r for r in reversed(app.bridge.stage_log.records)
                       if r.event is event), None)
        if record is not None:
            app.query_one(StageTimeline).add_stage(record)
        app.query_one(TranscriptList).note_stage(event.stage, event.files)
        await conversation.stage(event, app.stage_why(event))
        app.schedule_views()
    elif isinstance(event, ev.PairViolation):
        app.query_one(StageTimeline).add_violation(event)
        await conversation.violation(event)
    elif isinstance(event, ev.ProbeChecked):
        await conversation.probe(event)
    elif isinstance(event, ev.PointerBroken):
        await conversation.notice(t("conv.pointer_broken", id=event.tool_use_id,
                                    path=event.path), "bold $warning")
    elif isinstance(event, ev.Retry):
        await conversation.notice(t("conv.retry", purpose=event.purpose,
                                    attempt=event.attempt, reason=event.reason), "$warning")
    elif isinstance(event, ev.MemorySelected):
        memory.selected(event.files)
        if event.files:
            await conversation.notice(t("conv.recalled", method=event.method,
                                        files=", ".join(event.files)), "$recalled")
    elif isinstance(event, ev.MemoryWritten):
        memory.own_change((event.file,))
        await conversation.notice(t("conv.memory_written", file=event.file,
                                    type=event.record_type), "bold $recalled")
    elif isinstance(event, ev.MemoryRejected):
        memory.rejected_candidate(event.name, event.reason)
    elif isinstance(event, ev.MemoryConsolidated):
        await conversation.notice(t("conv.consolidated", before=event.before,
                                    after=event.after), "$recalled")
    elif isinstance(event, ev.MemoryConsolidationFailed):
        await conversation.notice(t("conv.consolidation_failed", reason=event.reason),
                                  "$error")
    elif isinstance(event, ev.IndexRebuilt):
        memory.own_change(event.changed)
        memory.refresh_catalog()
    elif isinstance(event, ev.Error):
        if event.kind != "cancelled":
            app.notify(event.message, title=t("notice.error_title", kind=event.kind),
                       severity="error", timeout=8)
            await conversation.notice(t("conv.error", kind=event.kind, message=event.message),
                                      "bold $error")
    elif isinstance(event, ev.TurnEnd):
        await conversation.end_assistant()
        app.schedule_views()
    elif isinstance(event, ev.RunEnd):
        await conversation.end_assistant()
        app.finished = app.config.scenario is not None
        app.update_status()
        app.schedule_views()
        if app.finished:
            app.notify(t("notice.finished"), title=t("notice.finished_title"), timeout=6)
