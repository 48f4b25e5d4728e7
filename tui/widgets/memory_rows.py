"""The Memory table's rows and how they share a panel's width.

The table is an index of the records: names come first and whole when they fit; the
description gets its own column only with room to say something after the longest name, and
otherwise follows each name, dim, as far as that row has room. The detail under the table
says the selected record's description in full, so nothing is lost to a cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content

from tui.widgets.columns import cut

DESC_MIN = 12  # fewer description cells than this say nothing: the column stays empty
TAIL_MIN = 8  # the same after a name in the name column (the row shows none)


@dataclass(frozen=True)
class CatalogRow:
    """One table row before it is cut to the columns: a record, or a file that is not one."""

    key: str
    badge: str
    badge_style: str
    name: str
    name_style: str
    mark: str  # "★ " for a recalled record
    description: str


def column_widths(space: int, badge: int, name: int, pad: int) -> tuple[int, int, int]:
    """``(type, name, description)`` widths in ``space`` cells (three columns' padding of
    ``pad`` each side already taken off): names whole first — the table is an index, and
    the detail under it says the selected record's description in full — then the
    description in what is left, once that is ``DESC_MIN`` or more. Without one (width 0:
    the column is left out) the names also get its padding, and each name is followed by
    as much of its description as fits (:func:`name_cell`)."""
    rest = space - badge
    if rest >= name + DESC_MIN:
        return badge, name, rest - name
    return badge, max(rest + 2 * pad, 1), 0


def name_cell(row: CatalogRow, width: int, with_description: bool) -> tuple[Content, bool]:
    """The name (★ when recalled) in ``width`` cells; ``with_description``: followed, dim, by
    as much of the description as the row has room for (no description column: a short
    name still says what the record is about). The flag says whether a description shows."""
    name = cut(row.name, width - cell_len(row.mark))
    left = width - cell_len(row.mark) - cell_len(name)
    tail = f" — {cut(row.description, left - 3)}" \
        if with_description and left - 3 >= TAIL_MIN else ""
    return Content.assemble((row.mark, "bold $recalled"), (name, row.name_style),
                            (tail, "dim")), bool(tail)
