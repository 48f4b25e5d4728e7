"""A ``DataTable`` whose every column has a width of its own and every row one line.

``DataTable`` measures every cell of every new row (on the next idle) to size the columns
that fit their content; a table whose columns all have fixed widths gains nothing from the
measures, and a replay's burst adds hundreds of rows at once (stages, archived files), which
made them one long stall. This skips the measures and keeps the rest of the update (the
virtual size, the render caches).

It also draws a row again only when something that row shows has changed. ``DataTable``
keys its rendered rows by a counter that every added row bumps and by the cursor's place,
so each new row or cursor move renders every visible row again, cell by cell: in a fast
replay the Stages table was half of what a frame drew. Here a rendered row is kept under
what it depends on: its own content (a version per row, bumped when a cell changes), its
place, the column widths, the table's width and state, and the cursor and the hover only
when they are on that row. Adding or removing a column forgets every kept row.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

from rich.style import Style
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

CellType = TypeVar("CellType")
KEPT_ROWS = 1000  # rendered rows kept (DataTable keeps as many of its own)


class FixedWidthTable(DataTable[CellType]):
    """Every column added with a ``width``, every row with height 1 (the default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._kept_rows: LRUCache[Hashable, Any] = LRUCache(KEPT_ROWS)
        self._row_versions: dict[RowKey, int] = {}
        super().__init__(*args, **kwargs)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(())
        # a column's width set directly (``tui.widgets.columns.set_widths``) asks for this
        # update; DataTable's own row cache does not know widths and would keep old rows
        self._update_count += 1

    # -- rendered rows kept while what they show holds ----------------------------------------

    def _render_line_in_row(self, row_key: RowKey, line_no: int, base_style: Style,
                            cursor_location: Coordinate, hover_location: Coordinate) -> Any:
        row = self._row_locations.get(row_key)
        if row is None:
            row = -1  # the header
        # the header shows the columns' labels, which change without a row's update_cell
        version = self._update_count if row_key is self._header_row_key \
            else self._row_versions.get(row_key, 0)
        key = (row_key, version, row, line_no, base_style,
               self._on_row(cursor_location, row), self._on_row(hover_location, row),
               self.cursor_type, self.show_cursor, self._show_hover_cursor,
               self._pseudo_class_state, self.size.width,
               tuple(column.get_render_width(self) for column in self.ordered_columns))
        kept = self._kept_rows.get(key)
        if kept is None:
            kept = super()._render_line_in_row(row_key, line_no, base_style,
                                               cursor_location, hover_location)
            self._kept_rows[key] = kept
        return kept

    def _on_row(self, location: Coordinate, row: int) -> Coordinate | None:
        """Where the cursor (or the hover) is, as far as row ``row`` can tell: a row or cell
        cursor elsewhere draws nothing on it; a column cursor is on every row."""
        return location if self.cursor_type == "column" or location.row == row else None

    def update_cell(self, row_key: RowKey | str, column_key: ColumnKey | str,
                    value: CellType, *, update_width: bool = False) -> None:
        super().update_cell(row_key, column_key, value, update_width=update_width)
        key = RowKey(row_key) if isinstance(row_key, str) else row_key
        self._row_versions[key] = self._row_versions.get(key, 0) + 1

    def remove_row(self, row_key: RowKey | str) -> None:
        super().remove_row(row_key)
        key = RowKey(row_key) if isinstance(row_key, str) else row_key
        self._row_versions[key] = self._row_versions.get(key, 0) + 1  # a new row may take it

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._kept_rows.clear()

    def clear(self, columns: bool = False) -> Any:
        self._row_versions.clear()  # no row left: a key used again starts afresh
        return super().clear(columns)

    def add_column(self, *args: Any, **kwargs: Any) -> Any:
        self._kept_rows.clear()  # every row gains a cell
        return super().add_column(*args, **kwargs)

    def remove_column(self, column_key: Any) -> None:
        self._kept_rows.clear()  # every row loses a cell
        super().remove_column(column_key)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kept_rows.clear()
