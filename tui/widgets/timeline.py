"""The "Timeline" tab: how full the context was at every request, and going to one.

It folds the run's events into requests (:class:`core.views.requests.RequestLog`; when it
draws them: a closed tab only keeps the events) and draws :func:`core.views.timeline.build`
of them on a plot (:mod:`tui.widgets.timeline_plot`): a replay's recorded original and
ctxlab's side, ctxlab's own run, or a watched client; each side's trigger; a mark at every
compaction; cache reads shaded. Over the plot one line says what the selected request was,
in the events' own figures.

Keys: ←/→ move the cursor a request, Home/End to the first and the newest (End follows
the newest again), Enter shows the selected request everywhere: the panel posts
:class:`TimelinePanel.Chosen` and the app does what the source allows — a replay seeks
there (paused), a finished run of ctxlab's own shows that request in the panels that can
show a past one (:meth:`tui.app.CtxlabApp.show_request`).

The picture follows a playing source a few times a second at most, and not while the tab
is out of view (:meth:`tui.widgets.timeline_plot.TimelinePlot.show`); the caption is cheap
and follows every batch.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from core import events as ev
from core.config import Thresholds
from core.views.requests import LaterLog, RequestLog, Side
from core.views.timeline import Mark, Timeline, build
from tui.i18n import localize_bindings, t
from tui.routing import Routed, RunInfo, draw_shown, handles
from tui.widgets.redraw import shown, update_if_changed
from tui.widgets.timeline_plot import CURSOR, SIDE_COLOURS, TRIGGER, TimelinePlot, View

FOLDED = (ev.RunStart, ev.ReplayStart, ev.WatchStart, ev.ModelRequest, ev.ModelResponse,
          ev.ReplayStep, ev.Stage, ev.WatchRequest, ev.WatchResponse)


def primary_side(timeline: Timeline) -> Side | None:
    """The side the cursor's caption leads with: the recorded or watched agent, else ctxlab."""
    order: tuple[Side, ...] = ("original", "watched", "ctxlab")
    sides = [s.side for s in timeline.series]
    return next((side for side in order if side in sides), None)


def mark_text(mark: Mark) -> str:
    """``auto_compact by claude-code: 190,048 → 764 tok`` (tokens where the agent said)."""
    by = t("timeline.by_ctxlab") if mark.side == "ctxlab" else str(mark.by)
    change = t("timeline.change_tokens", before=mark.before_tokens, after=mark.after_tokens) \
        if mark.in_tokens else t("timeline.change_chars", before=mark.before_chars,
                                 after=mark.after_chars)
    return t("timeline.mark", stage=mark.stage, by=by, change=change)


class TimelinePanel(Routed, Vertical, can_focus=True):
    """Caption, legend and plot; the cursor is this panel's."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "key.timeline_back", show=False),
        Binding("right", "move(1)", "key.timeline_forward", show=False),
        Binding("home", "first", "key.timeline_first", show=False),
        Binding("end", "newest", "key.timeline_newest", show=False),
        Binding("enter", "choose", "key.timeline_choose"),
    ]
    DEFAULT_CSS = """
    TimelinePanel { height: 1fr; padding: 0 1; }
    TimelinePanel #timeline-caption { max-height: 4; text-wrap: nowrap;
                                      text-overflow: ellipsis; }
    TimelinePanel #timeline-legend { text-wrap: nowrap; text-overflow: ellipsis;
                                     color: $text-muted; }
    """

    class Chosen(Message):
        """The presenter asked every panel to show request ``index``."""

        def __init__(self, index: int, side: Side | None) -> None:
            super().__init__()
            self.index, self.side = index, side

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self._requests = LaterLog()  # folded when the plot is built (or asked)
        self.limits: Thresholds | None = None  # ctxlab's thresholds, as run.limits
        self.total = 0  # a replay's requests, as replay_start said (the x axis' length)
        self.selected: int | None = None  # None: follow the newest request
        self.timeline = Timeline(())
        self._stale = False

    @property
    def requests(self) -> RequestLog:
        return self._requests.log

    def compose(self) -> ComposeResult:
        yield Static(id="timeline-caption", markup=False)
        yield Static(id="timeline-legend", markup=False)
        yield TimelinePlot(id="timeline-plot")

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self.redraw_now(), init=False)
        self.redraw_now()

    # -- events ---------------------------------------------------------------------------

    @handles(*FOLDED)
    def fold(self, event: ev.Event) -> None:
        self._requests.add(event)
        if isinstance(event, ev.ReplayStart):
            self.total = event.requests
        self.redraw_once(self.changed)

    @handles(ev.Rewind)
    def rewound(self, event: ev.Rewind) -> None:
        self._requests.add(event)
        self.redraw_once(self.changed)

    def reset(self, run: RunInfo) -> None:
        """A new run, or a replay going back: no requests yet (what the replay is, its
        ratio and window, stays until the next ``run_start``)."""
        self._requests.add(ev.Rewind(position=0))
        self.limits = run.limits
        self.changed()

    # -- the cursor -------------------------------------------------------------------------

    def stops(self) -> list[int]:
        """Where the cursor can go: every request seen and, in a replay, every request it
        holds (Enter on one not played yet plays on to it)."""
        seen = set(self.timeline.requests)
        return sorted(seen | set(range(1, self.total + 1))) if self.total else sorted(seen)

    @property
    def cursor(self) -> int | None:
        """The request the cursor is on: the chosen one, else the newest."""
        if self.selected is not None:
            return self.selected
        requests = self.timeline.requests
        return requests[-1] if requests else None

    def select(self, index: int | None) -> None:
        """Put the cursor on request ``index`` (None: follow the newest)."""
        newest = self.timeline.requests[-1] if self.timeline.requests else None
        self.selected = None if index is not None and index == newest and not self.total \
            else index
        self.redraw_now()

    def action_move(self, step: int) -> None:
        stops = self.stops()
        if not stops:
            return
        here = self.cursor
        at = stops.index(here) if here in stops else len(stops) - 1
        self.select(stops[max(0, min(len(stops) - 1, at + step))])

    def action_first(self) -> None:
        stops = self.stops()
        if stops:
            self.select(stops[0])

    def action_newest(self) -> None:
        self.select(None)

    def action_choose(self) -> None:
        index = self.cursor
        if index is not None:
            self.post_message(self.Chosen(index, primary_side(self.timeline)))

    # -- drawing ----------------------------------------------------------------------------

    def on_show(self) -> None:
        draw_shown(self, self._requests, self.redraw_now, self._stale)

    def changed(self) -> None:
        """New data: the caption at once, the plot within its redraw period."""
        self.refresh_view(now=False)

    def redraw_now(self) -> None:
        """The caption and the picture now (a key moved the cursor)."""
        self.refresh_view(now=True)

    def refresh_view(self, now: bool) -> None:
        """Built only while the tab shows: a long replay at full speed need not rebuild a
        picture nobody sees at every batch (it is built when the tab opens)."""
        if not self.is_mounted or not shown(self):
            self._stale = True
            return
        self._stale = False
        self.timeline = build(self.requests, self.limits)
        self.caption()
        span = max(self.total, self.timeline.requests[-1] if self.timeline.requests else 0)
        self.query_one(TimelinePlot).show(View(self.timeline, self.cursor, span), now=now)

    def caption(self) -> None:
        update_if_changed(self.query_one("#timeline-caption", Static), self.caption_text())
        update_if_changed(self.query_one("#timeline-legend", Static), self.legend())

    def caption_text(self) -> Content:
        """The selected request in the events' figures: each side's tokens (counted or
        estimated), its cache reads, and the compactions it followed. One line when it
        fits the panel, else a line per side (a line cut short would hide a figure)."""
        index = self.cursor
        if index is None:
            return Content.styled(t("timeline.empty"), "dim italic")
        stops = self.stops()
        head = Content.styled(
            t("timeline.request", n=index, total=stops[-1] if stops else index), "bold")
        sides: list[Content] = []
        marks: list[Mark] = []
        for series in self.timeline.series:
            at = series.at(index)
            if at is None:
                continue
            kind = t("timeline.counted" if series.counted[at] else "timeline.estimated")
            read = series.cache_read[at]
            sides.append(Content.assemble(
                (t(f"timeline.side.{series.side}"), f"bold ${SIDE_COLOURS[series.side]}"),
                " ", t("timeline.tokens", n=series.y[at], kind=kind),
                t("timeline.cache", n=read) if read else ""))
            marks += [m for m in series.marks if m.index == index]
        if not sides:
            sides.append(Content.styled(t("timeline.not_yet"), "dim italic"))
        one = Content("  ").join([head, *sides])
        width = self.content_region.width
        lines = [one] if not width or one.cell_length <= width else [head, *sides]
        lines += [Content.styled("▲ " + mark_text(m), f"${SIDE_COLOURS[m.side]}")
                  for m in marks]
        return Content("\n").join(lines)

    def on_resize(self) -> None:
        if self.is_mounted:
            self.caption()

    def legend(self) -> Content:
        """What each line is, with each trigger's figure (in the projector's heavy marks
        too: the legend is where the trigger line is labelled)."""
        heavy = self.query_one(TimelinePlot).heavy()
        parts: list[Content | tuple[str, str] | str] = []
        for series in self.timeline.series:
            colour = SIDE_COLOURS[series.side]
            parts += [("━ ", f"bold ${colour}"), t(f"timeline.side.{series.side}"), "   "]
            if series.threshold is not None:
                parts += [("━━ " if heavy else "── ", f"${TRIGGER[series.side]}"),
                          t("timeline.trigger", n=series.threshold), "   "]
        marked = [s.side for s in self.timeline.series if s.marks]
        if marked:
            parts += [("│ ", f"bold ${SIDE_COLOURS[marked[0]]}"), t("timeline.marks"), "   "]
        if any(s.has_cache for s in self.timeline.series):
            parts += [("█ ", "$panel-lighten-2"), t("timeline.cache_legend"), "   "]
        if parts:
            parts += [("│ ", f"bold ${CURSOR}"), t("timeline.keys")]
        return Content.assemble(*parts)
