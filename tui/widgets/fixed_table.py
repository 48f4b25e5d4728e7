"""A ``DataTable`` whose every column has a width of its own and every row one line.

``DataTable`` measures every cell of every new row (on the next idle) to size the columns
that fit their content; a table whose columns all have fixed widths gains nothing from the
measures, and a replay's burst adds hundreds of rows at once (stages, archived files), which
made them one long stall. This skips the measures and keeps the rest of the update (the
virtual size, the render caches).

Its rows are one line each, so where a row is needs no walk of the rows: ``DataTable``
lists every row in order and every line's row again after each change (``ordered_rows``,
``_y_offsets``), and works out a row's place by adding up the heights of all rows above it
— per routing of a long replay, thousands of rows (the Stages and Transcripts tables
reached 10,000 and 15,000 at 60 MB, up to 28 ms each time). Here line ``y`` is row ``y``,
and the rows in order are kept and extended as rows are appended.

It also draws a row again only when something that row shows has changed. ``DataTable``
keys its rendered rows by a counter that every added row bumps and by the cursor's place,
so each new row or cursor move renders every visible row again, cell by cell: in a fast
replay the Stages table was half of what a frame drew. Here a rendered row is kept under
what it depends on: its own content (a version per row, bumped when a cell changes), its
place, the column widths, the table's width and state, and the cursor and the hover only
when they are on that row. Adding or removing a column forgets every kept row. A drawn
line (the row's cells joined and cut to the view) is kept under the same key.

A row not kept yet is drawn cell by cell, and DataTable draws each cell through three Rich
renderables (``Styled``, ``Padding``, the text), wrapping and cropping lines a one-line cell
does not have. A fast replay lists a screenful of new stages twice a second: a cell of plain
text is cut and padded to its column directly here, with the same segments and styles.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from itertools import zip_longest
from typing import Any, TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual.cache import LRUCache
from textual.color import Color
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, DuplicateKey, Row, RowKey

from tui.wide_chars import NARROW

CellType = TypeVar("CellType")
KEPT_ROWS = 1000  # rendered rows kept (DataTable keeps as many of its own)


def one_line(cell: Text) -> bool:
    """A cell the short way draws as DataTable would: Rich text of one line, left-aligned,
    no tabs, no style of its own (DataTable pads a cell's text with an unstyled space), cut
    at its column's edge (text that may overflow it is left to DataTable)."""
    return not cell.style and cell.overflow != "ignore" and \
        cell.justify in (None, "default", "left") and \
        "\n" not in cell.plain and "\t" not in cell.plain


def plain_text(value: str) -> bool:
    """A cell's string that DataTable shows as it is: one line, no markup (``[``) nor emoji
    code (``:``) to read, every character one cell wide (so a cut is a slice: ``NARROW``
    knows none wider or narrower, not even in pairs that add up)."""
    return "[" not in value and ":" not in value and NARROW(value) is not None


class OneLineOffsets:
    """``DataTable._y_offsets`` when every row is one line: line ``y`` is the first (and
    only) line of row ``y``, looked up when asked instead of listed after every change."""

    __slots__ = ("locations",)

    def __init__(self, locations: TwoWayDict[RowKey, int]) -> None:
        self.locations = locations

    def __len__(self) -> int:
        return len(self.locations)

    def __getitem__(self, y: int) -> tuple[RowKey, int]:
        key = self.locations.get_key(y) if y >= 0 else None
        if key is None:
            raise IndexError(y)
        return key, 0

    def clear(self) -> None:
        """(``DataTable.clear`` empties the list it had; the rows' places go with them.)"""


class FixedWidthTable(DataTable[CellType]):
    """Every column added with a ``width``, every row with height 1 (the default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._tall = False  # a row of another height was added: DataTable's own ways
        self._ordered: list[Row] = []  # the rows in order, for ``_ordered_for``
        self._ordered_for: TwoWayDict[RowKey, int] | None = None
        self._kept_rows: LRUCache[Hashable, Any] = LRUCache(KEPT_ROWS)
        self._row_versions: dict[RowKey, int] = {}
        self._base_rich_style: Style | None = None
        self._widths: tuple[int, ...] | None = None
        self._kept_lines: LRUCache[Hashable, Any] = LRUCache(KEPT_ROWS)
        super().__init__(*args, **kwargs)

    # -- rows of one line: where a row is, without a walk of the rows -------------------------

    def add_row(self, *cells: CellType, height: int | None = 1, key: str | None = None,
                label: Any = None) -> RowKey:
        if height != 1:
            self._tall = True
        return super().add_row(*cells, height=height, key=key, label=label)

    @property
    def ordered_rows(self) -> list[Row]:
        """The rows in order, kept while rows are only appended: every change but an
        append gives the table a new ``_row_locations`` (removing, sorting, clearing,
        :meth:`~tui.widgets.transcript_list.TranscriptList.add_newest`)."""
        if self._tall:
            return super().ordered_rows
        locations = self._row_locations
        if self._ordered_for is not locations or len(self._ordered) > len(locations):
            self._ordered, self._ordered_for = [], locations
        ordered, rows, key_at = self._ordered, self.rows, locations.get_key
        for index in range(len(ordered), len(locations)):
            ordered.append(rows[key_at(index)])  # type: ignore[index]
        return ordered

    @property
    def _y_offsets(self) -> Any:
        return super()._y_offsets if self._tall else OneLineOffsets(self._row_locations)

    def _get_row_region(self, row_index: int) -> Region:
        if self._tall or not self.is_valid_row_index(row_index):
            return super()._get_row_region(row_index)
        width = sum(column.get_render_width(self) for column in self.columns.values()) + \
            self._row_label_column_width
        top = self.header_height if self.show_header else 0
        return Region(0, top + row_index, max(self.size.width, width), 1)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(())
        # a column's width set directly (``tui.widgets.columns.set_widths``) asks for this
        # update; DataTable's own row cache does not know widths and would keep old rows
        self._update_count += 1

    # -- rendered rows kept while what they show holds ----------------------------------------

    def _kept_key(self, row_key: RowKey, line_no: int, base_style: Style,
                  cursor_location: Coordinate, hover_location: Coordinate) -> Hashable:
        """What a rendered line of a row depends on."""
        row = self._row_locations.get(row_key)
        if row is None:
            row = -1  # the header
        # the header shows the columns' labels, which change without a row's update_cell
        # (a label is replaced, or set to other text); rows added do not change it
        version = tuple((id(column.label), column.label.plain)
                        for column in self.ordered_columns) \
            if row_key is self._header_row_key else self._row_versions.get(row_key, 0)
        widths = self._widths
        if widths is None:
            widths = tuple(column.get_render_width(self) for column in self.ordered_columns)
        return (row_key, version, row, line_no, base_style,
                self._on_row(cursor_location, row), self._on_row(hover_location, row),
                self.cursor_type, self.show_cursor, self._show_hover_cursor,
                self._pseudo_class_state, self.size.width, widths)

    def _render_line_in_row(self, row_key: RowKey, line_no: int, base_style: Style,
                            cursor_location: Coordinate, hover_location: Coordinate) -> Any:
        key = self._kept_key(row_key, line_no, base_style, cursor_location, hover_location)
        kept = self._kept_rows.get(key)
        if kept is None:
            kept = self._body_row(row_key, line_no, base_style, cursor_location,
                                  hover_location) or \
                super()._render_line_in_row(row_key, line_no, base_style, cursor_location,
                                            hover_location)
            self._kept_rows[key] = kept
        return kept

    def _body_row(self, row_key: RowKey, line_no: int, base_style: Style,
                  cursor_location: Coordinate, hover_location: Coordinate) -> Any:
        """``DataTable._render_line_in_row`` for a body row of a table with no fixed
        columns nor row labels, within a frame (:meth:`render_lines`): the same cells and
        the same filler after them, without working out the header's style and the columns'
        widths again for each row. None for any other row."""
        widths = self._widths
        row_index = self._row_locations.get(row_key)
        if widths is None or row_index is None or self.fixed_columns or \
                (self._labelled_row_exists and self.show_row_labels):
            return None
        cursor_type = self.cursor_type
        highlight = self._should_highlight
        row_style = self._get_row_style(row_index, base_style)
        cells = []
        for column_index, width in enumerate(widths):
            at = Coordinate(row_index, column_index)
            cells.append(self._render_cell(
                row_index, column_index, row_style, width,
                cursor=highlight(cursor_location, at, cursor_type),
                hover=highlight(hover_location, at, cursor_type))[line_no])
        room = max(0, self.size.width - sum(widths) - self._row_label_column_width)
        if cursor_type == "row":
            extend, _ = self._get_styles_to_render_cell(
                False, False, False,
                highlight(hover_location, Coordinate(row_index or 0, 0), cursor_type),
                row_index == cursor_location.row, self.show_cursor, self._show_hover_cursor,
                False, False)
            extend = row_style + extend
        elif row_style.bgcolor is not None:
            faded = Color.from_rich_color(row_style.bgcolor).blend(
                self.background_colors[1], factor=0.25)
            extend = Style.from_color(color=row_style.color, bgcolor=faded.rich_color)
        else:
            extend = Style.from_color(row_style.color, row_style.bgcolor)
        extend += Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        cells.append([Segment(" " * room, extend)])
        return [], cells

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Any:
        try:
            row_key, line_no = self._get_offsets(y)
        except LookupError:
            return super()._render_line(y, x1, x2, base_style)
        key = (self._kept_key(row_key, line_no, base_style, self.cursor_coordinate,
                              self.hover_coordinate), x1, x2)
        strip = self._kept_lines.get(key)
        if strip is None:
            strip = super()._render_line(y, x1, x2, base_style)
            self._kept_lines[key] = strip
        return strip

    # -- a one-line cell drawn the short way --------------------------------------------------

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False) -> Any:
        """A body cell of plain one-line text is cut and padded to its column directly;
        anything else (the header, a ``Content`` cell, tabs, a tall row) DataTable's way."""
        if row_index < max(0, self.fixed_rows) or column_index < max(0, self.fixed_columns):
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        assert row_key is not None and column_key is not None  # the indexes are on the table
        key = (row_key, column_key, base_style, cursor, hover, self._show_hover_cursor,
               self._update_count, self._pseudo_class_state)
        kept = self._cell_render_cache.get(key)
        if kept is None:
            inner = max(0, width - 2 * self.cell_padding)
            raw = self._data[row_key].get(column_key)
            if isinstance(raw, str) and plain_text(raw) and self.rows[row_key].height == 1:
                # what DataTable makes of it, a Text of that text: cut or padded to fit
                body = [Segment(raw[:inner] if len(raw) > inner else raw.ljust(inner))]
            else:
                cell = self._get_row_renderables(row_index).cells[column_index]
                if not (isinstance(cell, Text) and one_line(cell)
                        and self.rows[row_key].height == 1):
                    return super()._render_cell(row_index, column_index, base_style, width,
                                                cursor, hover)
                text = cell.copy()
                text.truncate(inner, pad=True)
                body = list(text.render(self.app.console))
            style = base_style + Style.from_meta({"row": row_index, "column": column_index})
            component, post = self._get_styles_to_render_cell(
                False, False, False, hover, cursor, self.show_cursor, self._show_hover_cursor,
                self.cursor_foreground_priority == "css",
                self.cursor_background_priority == "css")
            pad = [Segment(" " * self.cell_padding)] if self.cell_padding > 0 else []
            self._cell_render_cache[key] = kept = [list(Segment.apply_style(
                [*pad, *body, *pad], style + component, post))]
        return kept

    def _get_row_style(self, row_index: int, base_style: Style) -> Style:
        """DataTable's row style, from the widget's cache of component styles (DataTable
        works each one out again, through every ancestor, for every row it draws)."""
        if row_index >= self.fixed_rows and not self.zebra_stripes:
            return base_style
        if row_index == -1:
            name = "datatable--header"
        elif row_index < self.fixed_rows:
            name = "datatable--fixed"
        else:
            name = "datatable--odd-row" if row_index % 2 else "datatable--even-row"
        return self.get_component_rich_style(name)

    # -- what a frame works out once, not once per line ---------------------------------------

    def render_lines(self, crop: Any) -> Any:
        self._base_rich_style = self.rich_style  # once per call, not once per line
        self._widths = tuple(column.get_render_width(self) for column in self.ordered_columns)
        try:
            return super().render_lines(crop)
        finally:
            self._base_rich_style = self._widths = None

    def render_line(self, y: int) -> Any:
        base = self._base_rich_style
        if base is None or self.fixed_rows:
            return super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        if y >= (self.header_height if self.show_header else 0):
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + self.size.width, base)

    def _on_row(self, location: Coordinate, row: int) -> Coordinate | None:
        """Where the cursor (or the hover) is, as far as row ``row`` can tell: a row or cell
        cursor elsewhere draws nothing on it; a column cursor is on every row."""
        return location if self.cursor_type == "column" or location.row == row else None

    # -- rows added in one go ------------------------------------------------------------------

    def add_keyed_rows(self, rows: Iterable[tuple[str, Sequence[CellType]]]) -> list[RowKey]:
        """``add_row(*cells, key=key)`` for each ``(key, cells)``, in order, with what
        ``add_row`` redoes for every row done once: the columns put in order, the cursor
        checked again (and its watchers run), the idle check. A fast replay's routing lists
        hundreds of stages, and that was most of the time each one took. Every row is
        checked first: a key taken (or given twice) or too many cells add none of them."""
        columns = [column.key for column in self.ordered_columns]
        batch = [(RowKey(key), cells) for key, cells in rows]
        taken: set[RowKey] = set()
        for row_key, cells in batch:
            if row_key in self._row_locations or row_key in taken:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            if len(cells) > len(columns):
                raise ValueError("More values provided than there are columns.")
            taken.add(row_key)
        for row_key, cells in batch:
            self._row_locations[row_key] = len(self.rows)
            self._data[row_key] = dict(zip_longest(columns, cells))
            self.rows[row_key] = Row(row_key, 1)
            self._new_rows.add(row_key)
        if batch:
            self._require_update_dimensions = True
            self.cursor_coordinate = self.cursor_coordinate
            if len(self.rows) == len(batch) and self.columns and self.show_cursor \
                    and self.cursor_type != "none":  # the first rows: a cell to highlight
                self._highlight_cursor()
            self._update_count += 1
            self.check_idle()
        return [row_key for row_key, _ in batch]

    def update_cell(self, row_key: RowKey | str, column_key: ColumnKey | str,
                    value: CellType, *, update_width: bool = False) -> None:
        super().update_cell(row_key, column_key, value, update_width=update_width)
        key = RowKey(row_key) if isinstance(row_key, str) else row_key
        self._row_versions[key] = self._row_versions.get(key, 0) + 1

    def remove_row(self, row_key: RowKey | str) -> None:
        super().remove_row(row_key)
        key = RowKey(row_key) if isinstance(row_key, str) else row_key
        self._row_versions[key] = self._row_versions.get(key, 0) + 1  # a new row may take it

    def _forget_kept(self) -> None:
        self._kept_rows.clear()
        self._kept_lines.clear()

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._forget_kept()

    def clear(self, columns: bool = False) -> Any:
        self._row_versions.clear()  # no row left: a key used again starts afresh
        self._tall = False
        return super().clear(columns)

    def add_column(self, *args: Any, **kwargs: Any) -> Any:
        self._forget_kept()  # every row gains a cell
        return super().add_column(*args, **kwargs)

    def remove_column(self, column_key: Any) -> None:
        self._forget_kept()  # every row loses a cell
        super().remove_column(column_key)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._forget_kept()
