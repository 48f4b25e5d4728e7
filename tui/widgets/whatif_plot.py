"""Every what-if strategy's fullness on one plot: tokens per request, the model's window.

The same plot widget as the fullness timeline (:mod:`tui.widgets.timeline_plot`, its axis
labels too), drawn once: a what-if is computed whole before it is shown, so there is no
stream to throttle and no cursor. Each strategy has the colour the report's SVG gives it
(:mod:`core.whatif.palette`), and :func:`legend` names them under the plot (textual-plot's
own legend floats over the lines, which a small terminal cannot spare). The window is drawn
first: a braille cell holds one line's dots, and where a strategy touches it the data wins.
"""

from __future__ import annotations

from textual import events, on
from textual.containers import Grid
from textual.content import Content
from textual.reactive import reactive
from textual_plot import HiResMode, PlotWidget

from core.whatif.model import WhatIf
from core.whatif.palette import WINDOW_COLOUR, colour_of
from tui.i18n import t
from tui.widgets.timeline_plot import RequestFormatter, TokensFormatter, tokens_label


def drawn(whatif: WhatIf) -> list[tuple[int, str]]:
    """The strategies that have requests to draw, each with its colour's position."""
    return [(n, run.name) for n, run in enumerate(r for r in whatif.strategies if r.requests)]


def legend(whatif: WhatIf) -> Content:
    """``━━ original  ━━ s08 …  ── window 200k``: each line's name in its colour."""
    parts: list[Content] = [Content.assemble(("━━ ", f"bold {colour_of(name, n)}"), name)
                            for n, name in drawn(whatif)]
    if whatif.window_tokens:
        parts.append(Content.assemble(("── ", WINDOW_COLOUR), t(
            "whatif.window", tokens=tokens_label(whatif.window_tokens))))
    return Content("  ").join(parts)


class WhatIfPlot(PlotWidget, can_focus=False):
    """One line per strategy (a dot for a one-request session), and the window."""

    BINDINGS = []  # noqa: RUF012 — no pan and zoom: the picture stays on the numbers

    DEFAULT_CSS = """
    WhatIfPlot { height: 14; }
    """

    # Not applied as they are set (PlotWidget's on_mount applies them): a watcher run
    # before the mount would find no parts on a plot removed before it mounted.
    margin_top = reactive(0, init=False)
    margin_bottom = reactive(2, init=False)
    margin_left = reactive(6, init=False)

    def __init__(self, whatif: WhatIf, *, id: str | None = None) -> None:
        super().__init__(id=id, allow_pan_and_zoom=False)
        self.whatif = whatif
        self.set_x_formatter(RequestFormatter())
        self.set_y_formatter(TokensFormatter())

    @on(events.Mount)
    def _unless_removed(self, event: events.Mount) -> None:
        """A plot removed before it was mounted (its screen closing) has lost its parts,
        which PlotWidget's own ``on_mount`` needs: that one is skipped."""
        if not self.query(Grid):
            event.prevent_default()

    def on_mount(self) -> None:
        # after PlotWidget's own on_mount, which runs after this one and clears the plot
        if self.query(Grid):
            self.call_after_refresh(self.draw)

    def draw(self) -> None:
        whatif = self.whatif
        self.clear()
        runs = {run.name: run for run in whatif.strategies}
        span = max((len(run.requests) for run in runs.values()), default=1)
        top = max([1, whatif.window_tokens or 0,
                   *(run.peak_tokens for run in runs.values())])
        self.set_xlimits(0.5, span + 0.5)
        self.set_ylimits(0, top * 1.08)
        if whatif.window_tokens:
            self.plot([0.5, span + 0.5], [whatif.window_tokens] * 2, line_style=WINDOW_COLOUR,
                      hires_mode=HiResMode.BRAILLE, label="window")
        for n, name in drawn(whatif):
            requests = runs[name].requests
            x, y = [r.index for r in requests], [r.tokens for r in requests]
            style = f"bold {colour_of(name, n)}"
            if len(requests) == 1:
                self.scatter(x, y, marker="●", marker_style=style, label=name)
            else:
                self.plot(x, y, line_style=style, hires_mode=HiResMode.BRAILLE, label=name)
