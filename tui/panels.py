"""The workbench's panels: each is its widget plus one registration here.

A row names the panel (``panel.<name>`` is its label in the locales), says where it sits — a
tab beside History, the right column, or the right column's bottom row — and builds its
widget. From the rows the app composes its layout, gives each keyed panel a digit key (in
row order, ``1``–``9`` then ``0``, so a new panel gets the next digit) and a palette
entry, lists the right-hand ones in the narrow layout's strip, and resets every panel at
each run start through its :meth:`tui.routing.Routed.reset`. Adding a panel is its widget
plus one row; :func:`registered` adds a row for a while, which is how a test proves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.widget import Widget

if TYPE_CHECKING:
    from tui.app import CtxlabApp

Place = Literal["tab", "right", "bottom"]

@dataclass(frozen=True)
class Panel:
    """One panel: its name, its place, and how to build its widget (given the app)."""

    name: str
    place: Place
    make: Callable[[CtxlabApp], Widget]
    keyed: bool = True  # a digit key, a palette entry and, on the right, a place in the strip
    widget_id: str = ""  # the widget's id when it is not the panel's name

    @property
    def id(self) -> str:
        return self.widget_id or self.name


def _conversation(app: CtxlabApp) -> Widget:
    from tui.widgets.conversation import Conversation

    return Conversation(app.lookup_result, app.stage_why, id="conversation")


def _model(app: CtxlabApp) -> Widget:
    from tui.widgets.model_view import ModelView

    return ModelView(id="model-view")


def _context(app: CtxlabApp) -> Widget:
    from tui.widgets.context_meter import ContextMeter

    return ContextMeter(id="context")


def _replay(app: CtxlabApp) -> Widget:
    from tui.widgets.replay_panel import ReplayPanel

    return ReplayPanel(id="replay")


def _stages(app: CtxlabApp) -> Widget:
    from tui.widgets.stage_timeline import StageTimeline

    return StageTimeline(id="stages")


def _transcripts(app: CtxlabApp) -> Widget:
    from tui.widgets.transcript_list import TranscriptList

    return TranscriptList(id="transcripts")


def _memory(app: CtxlabApp) -> Widget:
    from tui.widgets.memory_catalog import MemoryCatalog

    return MemoryCatalog(id="memory")


def _window(app: CtxlabApp) -> Widget:
    from tui.widgets.window_view import WindowView

    return WindowView(id="window")


def _timeline(app: CtxlabApp) -> Widget:
    from tui.widgets.timeline import TimelinePanel

    return TimelinePanel(id="timeline")


def _items(app: CtxlabApp) -> Widget:
    from tui.widgets.items_panel import ItemsPanel

    return ItemsPanel(id="items")


def _diff(app: CtxlabApp) -> Widget:
    from tui.widgets.turn_diff_panel import TurnDiffPanel

    return TurnDiffPanel(id="diff")


PANELS: list[Panel] = [
    Panel("history", "tab", _conversation, widget_id="conversation"),
    Panel("model", "tab", _model, widget_id="model-view"),
    Panel("context", "right", _context),
    Panel("replay", "right", _replay, keyed=False),  # a replay's own: shown by its view
    Panel("stages", "right", _stages),
    Panel("transcripts", "bottom", _transcripts),
    Panel("memory", "bottom", _memory),
    Panel("window", "tab", _window),
    Panel("timeline", "tab", _timeline),
    Panel("items", "tab", _items),
    Panel("diff", "tab", _diff),
]


def placed(place: Place) -> list[Panel]:
    return [panel for panel in PANELS if panel.place == place]


def keyed() -> list[Panel]:
    """The panels with a digit key, in key order."""
    return [panel for panel in PANELS if panel.keyed]


DIGITS = "1234567890"  # the keys in keyboard order: the tenth keyed panel gets 0


def keys() -> dict[str, str]:
    """Panel name → its digit key: ``history`` → ``1``, in row order, ``1``–``9`` then
    ``0`` (a panel past the tenth has none: the palette still reaches it)."""
    return {panel.name: key for panel, key in zip(keyed(), DIGITS, strict=False)}


def in_strip() -> list[Panel]:
    """The right column's keyed panels: one at a time in the narrow layout, named in its strip."""
    return [panel for panel in keyed() if panel.place != "tab"]


def by_name(name: str) -> Panel | None:
    return next((panel for panel in PANELS if panel.name == name), None)


@contextmanager
def registered(panel: Panel, after: str | None = None) -> Iterator[Panel]:
    """Add ``panel`` right after the panel named ``after`` (else last), for the duration
    of the block: an app made inside it has the panel, its key, its strip place and reset."""
    if by_name(panel.name) is not None:
        raise ValueError(f"a panel named {panel.name!r} already exists")
    names = [p.name for p in PANELS]
    PANELS.insert(names.index(after) + 1 if after else len(PANELS), panel)
    try:
        yield panel
    finally:
        PANELS.remove(panel)
