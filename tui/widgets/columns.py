"""Column widths that follow a panel's width, for the Memory and Transcripts tables.

Fixed widths were chosen for one terminal and were wrong at every other: a 38-column panel
cut "written by" to ``fit_t`` while a description column 60 cells wide sat off screen, and a
wide panel cut names it had room for. Here each table says how wide its cells want to be,
the room is measured (the panel's width less cell padding and a scrollbar when one shows),
and the columns share it; text that still does not fit ends in "…", so a cut reads as one.
A width stays an explicit number, not ``auto``: an auto width remembers the widest row
ever shown and so depends on how refreshes happened to batch.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, ending in "…" when it had to be cut."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out + "…"


def room(table: DataTable[Any], width: int, scrollbar: bool, columns: int) -> int:
    """Cells ``columns`` columns can share in a table ``width`` cells wide: less each
    column's padding, and less the vertical scrollbar when the rows overflow (``scrollbar``)."""
    if scrollbar:
        width -= table.styles.scrollbar_size_vertical
    return width - 2 * table.cell_padding * columns


def set_widths(table: DataTable[Any], widths: dict[str, int]) -> bool:
    """Give the columns named in ``widths`` those widths; True when any changed."""
    changed = False
    for key, width in widths.items():
        column = table.columns.get(ColumnKey(key))
        if column is not None and column.width != width:
            column.width = width
            changed = True
    if changed:
        # Textual has no public call to resize a column: this is what add_column sets.
        table._require_update_dimensions = True
        table.refresh()
    return changed
