"""One colour per what-if strategy, shared by the workbench's plot and the report's SVG.

A reader who saw the workbench's compare screen and then opens the report finds each
strategy in the same colour. ``original`` keeps the recorded agent's orange and ``s08``
ctxlab's blue, as on the fullness timeline; the others are picked to stay apart from those
two and from each other on a dark terminal and on a white page alike.
"""

from __future__ import annotations

STRATEGY_COLOURS: dict[str, str] = {
    "original": "#d9822b",
    "s08": "#2b7bb9",
    "s08-window": "#6fb0e6",
    "api-clear-tool-uses": "#3a9d5d",
    "api-compaction": "#9b59b6",
    "observation-masking": "#c8a415",
    "truncate": "#c0392b",
}
# A strategy this table does not name (one added later) still gets a colour of its own.
SPARE_COLOURS = ("#16a2a2", "#e06c9f", "#8c8c8c")
WINDOW_COLOUR = "#8c8c8c"  # the model's window: a flat grey line


def colour_of(name: str, position: int) -> str:
    """``name``'s colour; ``position`` (its place among the strategies shown) picks a
    spare one for a name the table lacks."""
    return STRATEGY_COLOURS.get(name, SPARE_COLOURS[position % len(SPARE_COLOURS)])
