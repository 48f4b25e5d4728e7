"""How a view marks the target and the trigger on a bar of context size.

The Context meter draws them, and every view that draws sizes against the limits (a
timeline, the window) marks them the same way, so a presenter's audience learns one sign
for each. A theme chooses the weight through its ``meter-marks`` variable: ``light``
(the default: ``┊`` target, ``│`` trigger) or ``heavy`` for a projector (``╏`` and ``┃``,
and a label row under the bar naming each mark with its number, since the back of a room
cannot tell two thin lines apart).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content

from tui.i18n import t

MARKS_VARIABLE = "meter-marks"  # the theme variable that chooses the weight


@dataclass(frozen=True)
class MarkStyle:
    """The glyphs of the two marks, and whether a label row names them."""

    target: str
    trigger: str
    labelled: bool
    target_style: str = "bold $warning"
    trigger_style: str = "bold $error"


LIGHT = MarkStyle(target="┊", trigger="│", labelled=False)
HEAVY = MarkStyle(target="╏", trigger="┃", labelled=True)


def mark_style(variables: Mapping[str, str]) -> MarkStyle:
    """The style a theme's variables ask for (light unless it says ``heavy``)."""
    return HEAVY if variables.get(MARKS_VARIABLE, "").strip().lower() == "heavy" else LIGHT


def _placed(label: str, at: int, width: int, corner_left: str,
            corner_right: str) -> tuple[int, str]:
    """A label pointing at column ``at``: ending there (``label ┛``) when it fits on the
    left, else starting there (``┗ label``), in cells (a Chinese label is twice as wide);
    a label past the width is cut where the row ends."""
    text = f"{label} {corner_right}"
    if cell_len(text) <= at + 1:
        return at + 1 - cell_len(text), text
    return at, f"{corner_left} {label}"


def label_rows(target_at: int, trigger_at: int, target: int, trigger: int,
               width: int, style: MarkStyle) -> list[Content]:
    """The rows under a bar naming the target and the trigger at their columns: one row
    when both labels fit apart, else one each (the target's first). Empty for an
    unlabelled style."""
    if not style.labelled:
        return []
    return named_rows([(t("marks.target", n=target), target_at, style.target_style),
                       (t("marks.trigger", n=trigger), trigger_at, style.trigger_style)],
                      width)


def named_rows(marks: list[tuple[str, int, str]], width: int) -> list[Content]:
    """Rows naming each mark (label, column, style) at its column: as few rows as keep
    the labels apart, in the order given."""
    spans = [(*_placed(label, at, width, "┗", "┛"), colour) for label, at, colour in marks]
    rows: list[list[tuple[int, str, str]]] = []
    for span in spans:
        start, text, _ = span
        row = next((r for r in rows if all(start >= s + cell_len(x) + 1 or
                                           start + cell_len(text) + 1 <= s
                                           for s, x, _ in r)), None)
        if row is None:
            rows.append([span])
        else:
            row.append(span)
    out = []
    for row in rows:
        parts: list[tuple[str, str] | str] = []
        col = 0
        for start, text, colour in sorted(row):
            parts += [" " * (start - col), (text, colour)]
            col = start + cell_len(text)
        out.append(Content.assemble(*parts).truncate(width))
    return out
