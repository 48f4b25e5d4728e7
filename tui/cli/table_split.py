"""Tables that never cut a number: columns that do not fit the width go to another table.

A number cut to ``282…`` is worse than no number, so the comparison tables (a scenario's
strategies, a session's what-if) are split over several tables rather than squeezed; each
starts again with the strategy's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

C = TypeVar("C")
PIPE_WIDTH = 1_000  # piped output: wide enough that no header is cut


def table_width(table: Any) -> int:
    """The width ``table`` takes when nothing in it is cut or wrapped."""
    from rich.console import Console
    from rich.measure import Measurement

    wide = Console(width=PIPE_WIDTH)
    return Measurement.get(wide, wide.options, table).maximum



def split_columns(columns: Sequence[C], width: int,
                  make_table: Callable[[Sequence[C]], Any]) -> list[list[C]]:
    """``columns`` in order, split into runs whose table (``make_table``) fits ``width`` (at
    least one column each: only a terminal too narrow for the strategy's name and one number
    still cuts). The scenario comparison and a session's what-if share it."""
    groups: list[list[C]] = [[]]
    for column in columns:
        trial = [*groups[-1], column]
        if groups[-1] and table_width(make_table(trial)) > width:
            groups.append([column])
        else:
            groups[-1] = trial
    return groups
