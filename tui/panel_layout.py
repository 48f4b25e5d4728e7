"""Which right-hand panels a terminal of a given size shows at once, and the Tab stops
when some of them are out of view.

A panel squeezed to a row or pushed off the bottom of the screen is hidden as surely as one
never drawn, and a wide terminal can still be short (a laptop pane, a browser at 1280×720).
So the layout is chosen by height as well as width, from the rows each panel takes in the
full layout (its fixed height, else its maximum, else a bare minimum), so that every panel
either shows at least :data:`MIN_CONTENT_ROWS` rows or is named with its key in the strip:

* ``all`` — wide (:data:`NARROW_WIDTH` columns or more) and tall enough for every panel
  at its full height, with :data:`MIN_CONTENT_ROWS` rows left for the bottom row;
* ``stacked`` — wide but too short for that: the first right-hand panel (Context, with a
  replay's own panel) on top and one of the others below it, the strip naming them all;
* ``one`` — narrow, or too short even for that: one panel at a time under the strip.

The choice depends on the size alone (and on whether a source's own panel is shown), never
on how full a panel happens to be, so the layout does not jump while a run plays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textual.css.scalar import Scalar, Unit
from textual.widget import Widget

from tui import panels

Mode = Literal["all", "stacked", "one"]

NARROW_WIDTH = 140  # below: one right-hand panel at a time, whatever the height
MIN_CONTENT_ROWS = 3  # a panel shown with fewer rows than this is as good as hidden
BORDER_ROWS = 2  # a panel's box: its top and bottom border
MIN_PANEL_ROWS = MIN_CONTENT_ROWS + BORDER_ROWS
CHROME_ROWS = 2  # the header above the panels and the footer below
STRIP_ROWS = 1


def cells(scalar: Scalar | None) -> int | None:
    """A height given in rows (``14``), or ``None`` for ``auto``, ``1fr``, a percentage."""
    if scalar is None or scalar.unit != Unit.CELLS:
        return None
    return int(scalar.value)


def full_rows(widget: Widget) -> int:
    """The rows ``widget`` takes in the full layout: its fixed height, else its maximum
    height; a panel that grows to fill (or has no limit) counts its bare minimum."""
    styles = widget.styles
    return cells(styles.height) or cells(styles.max_height) or MIN_PANEL_ROWS


@dataclass(frozen=True)
class Rows:
    """What the right column must hold: the top group's rows (the first right-hand panel
    and any source's own panel shown with it) and each other right-hand panel's rows; the
    bottom row fills what is left."""

    top: int
    others: Sequence[int]
    has_bottom: bool


def choose(width: int, height: int, rows: Rows) -> Mode:
    """The layout for a ``width``×``height`` terminal (see the module's docstring)."""
    room = height - CHROME_ROWS
    if width < NARROW_WIDTH:
        return "one"
    bottom = MIN_PANEL_ROWS if rows.has_bottom else 0
    if rows.top + sum(rows.others) + bottom <= room:
        return "all"
    if STRIP_ROWS + rows.top + MIN_PANEL_ROWS <= room:
        return "stacked"
    return "one"


def anchor() -> str:
    """The panel that stays on top in the stacked layout: the first in the strip."""
    return panels.in_strip()[0].name


def group(name: str) -> list[str]:
    """The strip panels shown together with ``name`` below the top one in the stacked
    layout: the bottom row's panels side by side, any other panel alone."""
    panel = panels.by_name(name)
    if panel is not None and panel.place == "bottom":
        return [each.name for each in panels.placed("bottom") if each.keyed]
    return [name]


def shown(mode: Mode, current: str, lower: str) -> set[str]:
    """The strip panels in view: all of them, the top one and ``lower``'s group, or just
    ``current``."""
    if mode == "all":
        return {panel.name for panel in panels.in_strip()}
    if mode == "stacked":
        return {anchor(), *group(lower)}
    return {current}


Stop = Widget | str  # a widget that takes focus, or a panel out of view by its name


def tab_stops(chain: Sequence[Widget], strip_widgets: dict[str, Widget]) -> list[Stop]:
    """The Tab order when some panels are out of view: the focus chain outside the strip's
    panels, then each strip panel in strip order — its own stops when it is shown, else its
    name (Tab to it brings it into view)."""
    def inside(widget: Widget, panel: Widget) -> bool:
        return widget is panel or panel in widget.ancestors

    stops: list[Stop] = [w for w in chain
                         if not any(inside(w, p) for p in strip_widgets.values())]
    for name, panel in strip_widgets.items():
        own = [w for w in chain if inside(w, panel)]
        stops.extend(own or [name])
    return stops


def step(stops: Sequence[Stop], focused: Widget | None, forward: bool) -> Stop | None:
    """The stop after (or before) the one holding ``focused``, round the end."""
    if not stops:
        return None
    at = next((n for n, stop in enumerate(stops) if stop is focused), None)
    if at is None:
        return stops[0] if forward else stops[-1]
    return stops[(at + (1 if forward else -1)) % len(stops)]
