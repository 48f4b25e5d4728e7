"""Which History entries take part in the layout: the newest few while the reader follows.

Textual lays out every displayed child of a scroll view on each frame that changes any
widget, and styles every widget it mounts, so a History holding hundreds of entries made
each frame of a long session cost in proportion to the whole history. (Tool calls and stage
marks, the bulk of them, are lines of one widget: :mod:`tui.widgets.item_run`.) The entries
stay (nothing is rebuilt or lost), in order, but only the newest :data:`WINDOW` are shown
while the History follows the run. The others are *parked*: either mounted and not
displayed (the layout skips them), or — the older entries of a burst that arrived all at
once — not mounted at all until the reader goes back to them. Scrolling to the top, or
moving the item cursor above the first shown entry, brings back the :data:`PAGE` parked
entries just before it; a search looks through every entry.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.containers import ScrollableContainer
from textual.widget import Widget

PARKED = "-parked"  # a class: the item is kept, not displayed, until the reader goes back
WINDOW = 100  # items shown while the History follows the run
PAGE = 100  # items brought back at a time when the reader goes further back
# Items shown after a burst of more new items than this: a replay at full speed routes
# hundreds at a time, twice a second, and each item mounted costs its styling and two
# layouts of the History (the second once its size is known) — for a screenful nobody can
# read at that pace. The reader going back brings the rest back a page at a time.
BURST = 40
Shows = Callable[[Widget], bool]


def parked(item: Widget) -> bool:
    """Kept and not shown: parked, or not mounted."""
    return item.parent is None or item.has_class(PARKED)


def park(widget: Widget) -> None:
    """No stylesheet rule names the class (``display`` hides the item), so adding it need
    not match the stylesheet against the item again: a burst parks a hundred at a time."""
    widget.add_class(PARKED, update=False)
    widget.display = False


def park_all(items: list[Widget]) -> None:
    """Park every item not parked yet."""
    for item in items:
        if not item.has_class(PARKED):
            park(item)


class HistoryWindow:
    """Every item of a History, oldest first (at most ``limit``), and which are shown."""

    def __init__(self, view: ScrollableContainer, limit: int, window: int = WINDOW,
                 page: int = PAGE, burst: int = BURST) -> None:
        self.view = view
        self.limit = limit
        self.window = window
        self.page = page
        self.burst = burst
        self.entries: list[Widget] = []

    def clear(self) -> None:
        self.entries.clear()

    @staticmethod
    def mounted(item: Widget) -> bool:
        return item.parent is not None

    async def add(self, items: list[Widget], following: bool) -> None:
        """New items after the others. Following the run, only the newest ``window`` are
        shown (after a burst of more than ``burst`` items, its newest ``burst``) and the
        rest parked (those of this burst left unmounted);
        the oldest past ``limit`` are removed."""
        self.entries.extend(items)
        extra = len(self.entries) - self.limit
        if extra > 0:
            gone, self.entries = self.entries[:extra], self.entries[extra:]
            await self.view.remove_children([w for w in gone if self.mounted(w)])
        kept = {id(w) for w in self.entries[-len(items):]} if items else set()
        fresh = [w for w in items if id(w) in kept]
        if following:  # a burst larger than ``burst`` (a replay at full speed) shows less
            cut = max(0, len(self.entries) - (
                self.burst if len(items) > self.burst else self.window))
            park_all(self.entries[:cut])
            shown = {id(w) for w in self.entries[cut:]}
            fresh = [w for w in fresh if id(w) in shown]
        if fresh:  # all registered at once, in order, whatever runs while it mounts
            await self.view.mount_all(fresh)

    def first_shown(self) -> int:
        """The index of the first entry shown (len(entries): none)."""
        return next((n for n, w in enumerate(self.entries) if not parked(w)),
                    len(self.entries))

    def bring_back(self, shows: Shows) -> list[Widget]:
        """Show the ``page`` parked items before the first one shown (each displayed if
        ``shows`` it: the search in force); the items brought back, oldest first."""
        end = self.first_shown()
        return self.unpark(self.entries[max(0, end - self.page):end], shows)

    def show_all(self, shows: Shows) -> None:
        """Every item back (a search looks through them all)."""
        self.unpark([w for w in self.entries if parked(w)], shows)

    def unpark(self, items: list[Widget], shows: Shows) -> list[Widget]:
        """Show these parked entries (in order); mount those never mounted, each before the
        next mounted entry (Textual adds a widget to the view at once and finishes mounting
        it in the background, so the order is right when this returns). The entries, oldest
        first."""
        for widget in items:
            widget.remove_class(PARKED, update=False)
            widget.display = shows(widget)
        for widget in reversed(items):
            if widget.parent is not None:
                continue
            at = self.entries.index(widget)
            after = next((w for w in self.entries[at + 1:] if self.mounted(w)), None)
            if after is None:
                self.view.mount(widget)
            else:
                self.view.mount(widget, before=after)
        return list(items)

    def park_older(self) -> None:
        """Back to following: only the newest ``window`` shown."""
        park_all(self.entries[:max(0, len(self.entries) - self.window)])
