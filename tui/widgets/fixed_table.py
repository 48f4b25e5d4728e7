"""A ``DataTable`` whose every column has a width of its own and every row one line.

``DataTable`` measures every cell of every new row (on the next idle) to size the columns
that fit their content; a table whose columns all have fixed widths gains nothing from the
measures, and a replay's burst adds hundreds of rows at once (stages, archived files), which
made them one long stall. This skips the measures and keeps the rest of the update (the
virtual size, the render caches).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

CellType = TypeVar("CellType")


class FixedWidthTable(DataTable[CellType]):
    """Every column added with a ``width``, every row with height 1 (the default)."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(())
