"""Textual messages the workbench passes around, and the sink that turns engine events into them.

The engine's emitter calls :class:`EventBridge` synchronously, from inside the agent loop
(which runs as an async worker on the app's own event loop). The bridge therefore only
posts, and leaves all drawing to message handlers: one message per event, except streamed
text: consecutive ``assistant_text`` deltas are appended to one open :class:`TextChunk`
until any other event seals it, so a fast stream costs one message per burst and text
never overtakes a later tool call. Everything a handler needs travels with its event (a
``stage`` event carries the before/after lists the stage recorded).

The memory watcher reports from its own thread straight to the Memory panel with
``post_message``, which is thread-safe.
"""

from __future__ import annotations

from textual.message import Message
from textual.message_pump import MessagePump

from core.events import AssistantText, Event


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
    """The engine-side sink: post a message per event to ``target``.

    ``generation`` tags every message with the run that produced it, so events of a run
    cancelled by a restart are dropped instead of drawn into the new run's panels.
    """

    def __init__(self, target: MessagePump, generation: int) -> None:
        self.target = target
        self.generation = generation
        self._chunk: TextChunk | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantText):
            if self._chunk is None or self._chunk.taken:
                self._chunk = TextChunk(self.generation)
                self.target.post_message(self._chunk)
            self._chunk.parts.append(event.delta)
            return
        self._chunk = None
        self.post(event)

    def post(self, event: Event) -> None:
        """Post one event (also used for the events of the UI's own memory store)."""
        self.target.post_message(EngineEvent(event, self.generation))
