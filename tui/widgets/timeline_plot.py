"""The fullness timeline drawn: :class:`core.views.timeline.Timeline` on a plot.

The plot is ``textual-plot``'s :class:`PlotWidget` (braille lines on a hi-res canvas).
``textual-plotext`` was the other maintained choice; both were measured redrawing the same
picture (three series of a few hundred requests, cache bars, a dozen compaction marks and a
cursor) at once and one point at a time, as a replay feeds it: ``textual-plot`` redrew in a
fraction of plotext's time, because it draws on a canvas where plotext builds its whole
figure as text and parses it again on every frame. Its filled bars in a hi-res mode cost a
few times its lines, so the cache reads are whole-cell bars: shading needs no finer edge.

One picture per call of :meth:`TimelinePlot.draw`: the cache reads shaded under the lines,
one line per side (the recorded original, ctxlab's side, a watched client), each side's
trigger as a flat line where it is known (drawn before the sides: a braille cell holds
one line's dots, and where a side runs through the trigger's cells the data wins; the
legend states the trigger's figure), a vertical mark at every compaction of either side,
and the cursor on the selected request. Colours are the theme's, so the projector theme's
contrast carries over, and its heavy marks: there a trigger is a row of whole cells. It
takes no keys and no mouse: the panel around it owns the cursor (the plot's own pan and
zoom would move the picture away from the numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.reactive import reactive
from textual_plot import HiResMode, NumericAxisFormatter, PlotWidget

from core.views.requests import Side
from core.views.timeline import Timeline
from tui.widgets.meter_marks import mark_style

# Each side's line, its trigger line and its compaction marks, as theme variables.
# ctxlab's is the Context meter's bar colour: the same side, the same colour.
SIDE_COLOURS: dict[Side, str] = {"original": "warning", "ctxlab": "meter-fill",
                                 "watched": "warning"}
CURSOR = "foreground"
CACHE = "panel-lighten-2"
TRIGGER: dict[Side, str] = {"original": "warning", "ctxlab": "error", "watched": "warning"}


class TokensFormatter(NumericAxisFormatter):
    """Tick labels a glance reads: ``150k`` rather than ``150000``."""

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [tokens_label(tick) for tick in ticks]


class RequestFormatter(NumericAxisFormatter):
    """Whole request numbers only: a request 2.5 does not exist."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        ticks = super().get_ticks(min_, max_, max_ticks)
        whole = [t for t in ticks if float(t).is_integer()]
        return whole or [float(round((min_ + max_) / 2))]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [str(int(tick)) for tick in ticks]


def tokens_label(value: float) -> str:
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"


@dataclass(frozen=True)
class View:
    """What one picture shows: the data, the cursor, and the x range (a replay's whole
    length, so the axis does not jump while it plays or after a seek back)."""

    timeline: Timeline
    selected: int | None
    span: int


REDRAW_PERIOD = 0.3  # seconds: at most about three pictures a second while a source plays


class TimelinePlot(PlotWidget, can_focus=False):
    """The plot, drawn only by :meth:`show` (throttled) or :meth:`draw` (now).

    A replay sends a burst of events per request at full speed, and a picture of a few
    hundred points costs far more than a line of text: :meth:`show` draws the latest view
    at most every :data:`REDRAW_PERIOD` seconds, and not at all while the plot is out of
    view (a tab not shown): it is drawn when it comes into view."""

    BINDINGS = []  # noqa: RUF012 — the panel's keys, not the plot's pan and zoom

    DEFAULT_CSS = """
    TimelinePlot { height: 1fr; min-height: 6; }
    """

    margin_top = reactive(0)
    margin_bottom = reactive(2)
    margin_left = reactive(6)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, allow_pan_and_zoom=False)
        self.set_x_formatter(RequestFormatter())
        self.set_y_formatter(TokensFormatter())
        self.shown: View | None = None  # the picture on screen
        self.wanted: View | None = None  # the picture asked for
        self._timer = False

    def show(self, view: View, now: bool = False) -> None:
        """Draw ``view`` now, or within :data:`REDRAW_PERIOD` (the latest one asked for)."""
        self.wanted = view
        if now:
            self._draw_wanted()
        elif not self._timer and self.is_mounted:
            self._timer = True
            self.set_timer(REDRAW_PERIOD, self._timed)

    def _timed(self) -> None:
        self._timer = False
        self._draw_wanted()

    def _draw_wanted(self) -> None:
        if self.wanted is None or self.wanted is self.shown or not self.is_mounted:
            return
        if self.display and self.is_on_screen:
            self.draw(self.wanted)

    def on_show(self) -> None:
        self._draw_wanted()

    def colour(self, variable: str) -> str:
        """A theme variable's colour as a Rich style (the canvas takes Rich styles)."""
        value = self.app.theme_variables.get(variable)
        return value or "white"

    def heavy(self) -> bool:
        """The projector's heavy marks (:mod:`tui.widgets.meter_marks`): a trigger drawn in
        whole cells, which the back of a room sees, rather than a braille hairline."""
        return self.is_attached and mark_style(self.app.current_theme.variables).labelled

    def draw(self, view: View) -> None:
        """The whole picture again (the plot keeps no state between pictures)."""
        self.shown = view
        timeline = view.timeline
        self.clear()
        top = max(timeline.top, 1)
        span = max(view.span, 1)
        self.set_xlimits(0.5, span + 0.5)
        self.set_ylimits(0, top * 1.08)
        for series in timeline.series:
            shaded = [(x, read) for x, read in zip(series.x, series.cache_read, strict=True)
                      if read]
            if shaded:
                self.bar([x for x, _ in shaded], [read for _, read in shaded], width=1.0,
                         bar_style=self.colour(CACHE))
        for series in timeline.series:
            for mark in series.marks:
                self.add_v_line(mark.index, f"bold {self.colour(SIDE_COLOURS[series.side])}")
        if view.selected is not None:
            self.add_v_line(view.selected, f"bold {self.colour(CURSOR)}")
        heavy = self.heavy()
        for series in timeline.series:  # before the sides: where they share a cell, the
            if series.threshold is not None:  # data wins (a braille cell holds one line)
                self.plot([0.5, span + 0.5], [series.threshold] * 2,
                          line_style=self.colour(TRIGGER[series.side]),
                          hires_mode=None if heavy else HiResMode.BRAILLE)
        for series in timeline.series:
            style = f"bold {self.colour(SIDE_COLOURS[series.side])}"
            if len(series.x) == 1:  # one request: a dot, not a line of no length
                self.scatter(list(series.x), list(series.y), marker="●", marker_style=style)
            else:
                self.plot(list(series.x), list(series.y), line_style=style,
                          hires_mode=HiResMode.BRAILLE)
