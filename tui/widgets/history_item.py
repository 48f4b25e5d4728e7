"""An item of the History drawn as lines, not as a widget: a tool call or a stage mark.

An item says what it shows (:meth:`HistoryItem.make`), how far it is indented and which
component style colours it; the run of items it belongs to
(:class:`~tui.widgets.item_run.ItemRun`) measures it from its text (:func:`height_of`) and
draws it when it comes into view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich._wrap import divide_line
from rich.cells import cell_len
from textual.content import Content

if TYPE_CHECKING:
    from tui.widgets.item_run import ItemRun


class HistoryItem:
    """One History entry drawn by an :class:`ItemRun`: it says what it shows; changing it
    (:meth:`changed`) redraws only its lines."""

    INDENT = 0  # cells before the item's lines
    COMPONENT = "item-run--mark"  # the component style of its text
    HOVERS = False  # whether the pointer over it gives it a background (it takes clicks)

    def __init__(self) -> None:
        self.run: ItemRun | None = None
        self.version = 0
        self._content: Content | None = None

    def make(self) -> Content:
        """What the item shows now (every line of it)."""
        raise NotImplementedError

    def content(self) -> Content:
        if self._content is None:
            self._content = self.make()
        return self._content

    def plain(self) -> str:
        """What the item shows, as text (measured without its styles)."""
        return self.content().plain

    def changed(self) -> None:
        self.version += 1
        self._content = None
        if self.run is not None:
            self.run.item_changed(self)

    def on_click(self, y: int, width: int) -> bool:
        """A click on line ``y`` of the item, drawn ``width`` cells wide; whether it acted."""
        return False


def height_of(plain: str, width: int) -> int:
    """The lines text takes at ``width`` cells, as ``Content`` wraps it to draw it (each
    line divided where Rich divides it), worked out from the text alone: a fast replay
    measures hundreds of items that are never drawn."""
    if "\t" in plain:  # as drawn: tabs first
        plain = plain.expandtabs(8)
    if "\n" not in plain and cell_len(plain) <= width:
        return 1
    return sum(1 if cell_len(line) <= width else len(divide_line(line, width, fold=True)) + 1
               for line in plain.split("\n"))
