"""Textual messages the workbench passes around, and the sink that turns engine events into them.

The engine's emitter calls :class:`EventBridge` synchronously, from inside the agent loop
(which runs as an async worker on the app's own event loop). The bridge therefore only
posts, and leaves all drawing to message handlers: one message per *burst*. Events are
appended to one open :class:`EngineEvents` until the app takes it, so everything the engine
emits between two of its awaits (a ``prepare()`` that fires four stages, a replay step) is
routed as one batch and each panel redraws once for it (:mod:`tui.routing`); streamed
assistant text goes the same way in one open :class:`TextChunk`. Either kind seals the
other, so text never overtakes a later tool call. Everything a handler needs travels with
its event (a ``stage`` event carries the before/after lists the stage recorded).

``prepare()`` runs its stages in a worker thread and they emit from there: the bridge hands
such an event to the loop's thread (``call_soon_threadsafe``), which alone touches the open
batch. The memory watcher reports from its own thread straight to the Memory panel with
``post_message``, which is thread-safe.
"""

from __future__ import annotations

import asyncio
import threading

from textual.message import Message
from textual.message_pump import MessagePump

from core.events import AssistantText, Event


class EngineEvents(Message):
    """A burst of events from the agent loop (``assistant_text`` travels as
    :class:`TextChunk`); ``events`` grows until the handler :meth:`take` s it."""

    def __init__(self, generation: int) -> None:
        super().__init__()
        self.events: list[Event] = []
        self.taken = False
        self.generation = generation

    def take(self) -> list[Event]:
        """The events so far; later ones go to a new batch (same thread, so no race)."""
        self.taken = True
        return list(self.events)


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
        self._batch: EngineEvents | None = None
        self._thread = threading.get_ident()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # made outside the app's loop: every call posts its own batch
            self._loop = None

    def __call__(self, event: Event) -> None:
        if threading.get_ident() != self._thread:
            # prepare()'s stages emit from a worker thread: the open batch is the loop
            # thread's alone, so the event goes there (in order: the thread's result is
            # handed back the same way, after its events).
            if self._loop is not None:
                try:
                    self._loop.call_soon_threadsafe(self, event)
                except RuntimeError:  # the loop has closed: the app is gone
                    pass
            else:
                self.target.post_message(self._new_batch(event))
            return
        if isinstance(event, AssistantText):
            self._batch = None
            if self._chunk is None or self._chunk.taken:
                self._chunk = TextChunk(self.generation)
                self.target.post_message(self._chunk)
            self._chunk.parts.append(event.delta)
            return
        self._chunk = None
        self.post(event)

    def post(self, event: Event) -> None:
        """Add one event to the open batch, or post a new batch holding it."""
        if self._batch is None or self._batch.taken:
            self._batch = self._new_batch()
            self.target.post_message(self._batch)
        self._batch.events.append(event)

    def _new_batch(self, *events: Event) -> EngineEvents:
        batch = EngineEvents(self.generation)
        batch.events.extend(events)
        return batch
