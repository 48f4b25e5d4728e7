"""Chars sent per main call, one labelled line per strategy, all on one scale.

Textual's ``Sparkline`` scales each line to its own minimum and maximum, which would make a
sliding window that peaks at 240k chars and a compacted history that peaks at 11k look the
same height. :class:`ScaledSparkline` keeps the built-in widget and only changes what each
bar means: its summary function maps a bucket to the height it has against a ceiling shared
by every line, measured from zero.

The ceiling is the highest peak of all strategies — unless that peak is far beyond the
context limit (a sliding window cannot drop the one huge result it was just handed), in which
case it is 125 % of the limit, as on the Context meter, and the taller calls are drawn cut
off at full height and flagged with ↑ beside their figures. Otherwise a single 280k spike
would flatten every compacted line to the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Sparkline, Static

from tui.i18n import t


class ScaledSparkline(Sparkline):
    """A sparkline whose full height is ``ceiling`` (not the line's own maximum)."""

    def __init__(self, data: Sequence[float], ceiling: float, *, id: str | None = None,
                 classes: str | None = None) -> None:
        self.ceiling = max(float(ceiling), 1.0)
        super().__init__(list(data), summary_function=self._height, id=id, classes=classes)

    def _height(self, bucket: Sequence[float]) -> float:
        """A value that the renderer, which scales between the line's own min and max,
        draws at ``max(bucket) / ceiling`` of the full height."""
        data = self.data or [0.0]
        low, high = min(data), max(data)
        return low + ((high - low) or 1.0) * max(bucket) / self.ceiling


class CompareChart(Vertical):
    """A row per strategy: name, the line, and its peak and mean."""

    def __init__(self, series: Sequence[tuple[str, Sequence[int]]], limit: int | None = None,
                 *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.series = [(name, list(values)) for name, values in series]
        self.ceiling = chart_ceiling([v for _, v in self.series], limit)

    def compose(self) -> ComposeResult:
        highest = max((max(v) for _, v in self.series if v), default=0)
        scale = t("compare.chart_scale", top=self.ceiling)
        if highest > self.ceiling:
            scale += " · " + t("compare.chart_clipped")
        yield Static(Content.assemble((t("compare.chart_title"), "bold"), "  ", (scale, "dim")),
                     classes="chart-title")
        for name, values in self.series:
            peak = max(values, default=0)
            mean = round(sum(values) / len(values)) if values else 0
            figures = t("compare.chart_figures", peak=peak, mean=mean, calls=len(values),
                        n=len(values))
            with Horizontal(classes="chart-row"):
                yield Static(Content.styled(name, "bold"), classes="chart-label")
                yield ScaledSparkline([min(v, self.ceiling) for v in values], self.ceiling,
                                      classes="chart-line")
                yield Static(Content.assemble(("↑ ", "bold $error") if peak > self.ceiling
                                              else "  ", figures), classes="chart-figures")


def chart_ceiling(series: Sequence[Sequence[int]], limit: int | None) -> int:
    """The shared full height: the highest peak, capped at 125 % of ``limit`` when given."""
    highest = max((max(v) for v in series if v), default=1) or 1
    if limit:
        return min(highest, max(1, int(limit * 1.25)))
    return highest
