"""What the workbench adds for a kind of event source, chosen by the source's type.

Every source is drawn by the same panels from the same events. A few kinds bring something
of their own: ctxlab's session has a memory store to show and follow, a replay has the
Replay panel, a watched client has a screen of its own. :data:`VIEWS` maps the source's
class to its :class:`SourceView`, looked up along the class's ancestry, so a subclass (a
canned watch for a screenshot) gets its parent's view, and a new kind of source is one row.
Classes are named by their import path, so opening the workbench on a scenario does not
import the proxy (and its HTTP stack) just to build this table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from core.sources import Source
from tui.i18n import t

if TYPE_CHECKING:
    from core.sources.agent.session import AgentSession
    from core.sources.replay.model import Recording
    from core.sources.replay.source import ReplaySource
    from core.sources.watch.source import WatchSource
    from tui.app import CtxlabApp


class SourceView:
    """The default: the panels and nothing more."""

    own_session = False  # ctxlab's own session: the keys that reconfigure it apply
    noun = "source.run"  # what to call it in a sentence ("the replay has ended"): a message id
    covers: frozenset[str] = frozenset()  # workbench actions a screen of its own hides

    async def attach(self, app: CtxlabApp, source: Source) -> None:
        """Right after the panels were reset for ``source``, before it runs."""

    def started(self, app: CtxlabApp, source: Source) -> None:
        """``run_start`` arrived: the source has set up what it shows."""

    def detach(self, app: CtxlabApp, source: Source) -> None:
        """The workbench stops showing ``source`` (a restart, quitting)."""

    def recording(self, source: Source | None) -> Recording | None:
        """The recorded session ``source`` plays, which the compare key runs under every
        context strategy (None: the source replays no recording)."""
        return None


class SessionView(SourceView):
    """ctxlab's own session: its memory store in the Memory panel, hand edits followed."""

    own_session = True

    async def attach(self, app: CtxlabApp, source: Source) -> None:
        if source.started:  # a rewind: the panels were reset, the store was opened anew
            self.started(app, source)

    def started(self, app: CtxlabApp, source: Source) -> None:
        # after run_start: the run has generated and seeded the workspace by now (opening
        # the store earlier would create .memory and stop the sample files being generated)
        from tui.widgets.memory_catalog import MemoryCatalog

        session = cast("AgentSession", source)  # this view's row is AgentSession's
        catalog = app.query_one(MemoryCatalog)
        if catalog.store is not None:
            return
        catalog.show_store(session.memory_store)
        try:
            session.watch_memory()
        except OSError as exc:
            app.notify(t("mem.not_watched", error=exc), severity="warning")

    def detach(self, app: CtxlabApp, source: Source) -> None:
        cast("AgentSession", source).stop_watching_memory()


class ReplayView(SourceView):
    """A replay: the Replay panel, beside the others."""

    noun = "source.replay"

    async def attach(self, app: CtxlabApp, source: Source) -> None:
        from tui.routing import OFF
        from tui.widgets.replay_panel import ReplayPanel

        app.query_one(ReplayPanel).remove_class(OFF)

    def recording(self, source: Source | None) -> Recording | None:
        return cast("ReplaySource", source).recording if source is not None else None


class WatchView(SourceView):
    """A watched client: the watch screen over the workbench, fed like any panel."""

    # the panels' keys: the Stages, History and meter behind the screen are not shown
    covers = frozenset({"toggle_view", "inspect", "zoom", "next_kind", "previous_kind",
                        "meaning", "search"})
    noun = "source.watch"

    async def attach(self, app: CtxlabApp, source: Source) -> None:
        from tui.screens.watch import WatchScreen

        screen = WatchScreen(body_of=cast("WatchSource", source).body)
        await app.push_screen(screen)
        app.routed.append(screen)

    def detach(self, app: CtxlabApp, source: Source) -> None:
        from tui.screens.watch import WatchScreen

        app.routed[:] = [r for r in app.routed if not isinstance(r, WatchScreen)]


VIEWS: dict[str, SourceView] = {
    "core.sources.agent.session.AgentSession": SessionView(),
    "core.sources.replay.source.ReplaySource": ReplayView(),
    "core.sources.watch.source.WatchSource": WatchView(),
}
DEFAULT = SourceView()


def view_for(source: Source | None) -> SourceView:
    """The view of the nearest class of ``source`` that has one (else :data:`DEFAULT`)."""
    for klass in type(source).__mro__ if source is not None else ():
        view = VIEWS.get(f"{klass.__module__}.{klass.__qualname__}")
        if view is not None:
            return view
    return DEFAULT
