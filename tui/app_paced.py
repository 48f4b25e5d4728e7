"""How the engine's events reach the panels: through the pacer, a burst at a time.

The engine's messages (``TextChunk``, ``EngineEvents``) are not drawn one by one: the pacer
(:mod:`tui.pacer`) gathers what comes within a frame — longer while bursts keep coming, as
in a replay at top speed — and hands it back here to be routed together, so a fast stream
costs one layout per routing instead of one per event. While a stream lasts, the garbage
collector is kept out of its frames (:mod:`tui.collector`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App, ScreenStackError
from textual.css.query import NoMatches

from core import events as ev
from tui.collector import RELAX_AFTER
from tui.messages import EngineEvents, TextChunk
from tui.routing import route_batch
from tui.widgets.conversation import Conversation

if TYPE_CHECKING:
    from tui.collector import QuietCollector
    from tui.pacer import Pacer
    from tui.routing import Routed


class PacedRouting(App[int]):
    """Mixed into :class:`tui.app.CtxlabApp`."""

    if TYPE_CHECKING:  # supplied by the app
        pacer: Pacer
        collector: QuietCollector
        routed: list[Routed]
        generation: int

    async def on_text_chunk(self, message: TextChunk) -> None:
        await self.pacer.add(message)

    async def on_engine_events(self, message: EngineEvents) -> None:
        await self.pacer.add(message)

    async def route_text(self, text: str) -> None:
        try:
            conversation = self.query_one(Conversation)
        except (NoMatches, ScreenStackError):  # the app is shutting down: the panels are gone
            return
        await conversation.assistant(text)

    async def route_events(self, events: list[ev.Event]) -> None:
        generation = self.generation  # a run started meanwhile takes none of these
        try:
            await route_batch(self.routed, events, lambda: self.generation == generation)
        except (NoMatches, ScreenStackError):  # the app is shutting down: no screen, no panels
            return
        if self.pacer.streaming:  # no full collection walking the run's kept events
            self.collector.settle()
        elif self.collector.settled:  # what the stream froze and dropped, freed once quiet
            self.set_timer(RELAX_AFTER, self._relax_when_quiet)

    def _relax_when_quiet(self) -> None:
        if not self.pacer.streaming and self.pacer.idle:
            self.collector.relax()
