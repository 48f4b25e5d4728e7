"""The watch screen's timeline: the watched conversation's context tokens per request.

The same fold and plot as the workbench's Timeline tab (:mod:`core.views.timeline`,
:mod:`tui.widgets.timeline_plot`), on the ``watched`` side only: one point per model
request the client sent (the API's count once its answer is in, the estimate until then),
a mark on every request that shows a client compaction, and the cursor on the request the
list has selected — the list owns the selection, this follows it.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from core import events as ev
from core.views.requests import RequestLog
from core.views.timeline import Timeline, build
from tui.i18n import t
from tui.widgets.redraw import shown, update_if_changed
from tui.widgets.timeline import mark_text
from tui.widgets.timeline_plot import TimelinePlot, View


class WatchTimeline(Vertical):
    """A caption for the selected request and the plot."""

    DEFAULT_CSS = """
    WatchTimeline { padding: 0 1; }
    WatchTimeline #watch-timeline-caption { height: auto; max-height: 2;
                                            text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = t("panel.timeline")
        self.requests = RequestLog()
        self.requests.see(ev.WatchStart(listen="", upstream="", recording=""))
        self.selected: int | None = None
        self.timeline = Timeline(())
        self._stale = False

    def on_show(self) -> None:
        if self._stale:
            self.refresh_view(now=True)

    def compose(self) -> ComposeResult:
        yield Static(id="watch-timeline-caption", markup=False)
        yield TimelinePlot(id="watch-timeline-plot")

    def see(self, event: ev.Event) -> None:
        """Fold one watch event; the picture follows within its redraw period."""
        if self.requests.see(event) is not None:
            self.refresh_view(now=False)

    def select(self, request_id: int | None) -> None:
        """The list's selection moved: the cursor and the caption follow at once."""
        if request_id != self.selected:
            self.selected = request_id
            self.refresh_view(now=True)

    def refresh_view(self, now: bool) -> None:
        """Built only while it shows (a watch runs for hours; a hidden plot need not
        follow), for the selected request's conversation."""
        if not self.is_mounted or not shown(self):
            self._stale = True
            return
        self._stale = False
        chosen = self.requests.find("watched", self.selected) if self.selected else None
        self.timeline = build(self.requests,
                              conversation=chosen.conversation if chosen else None)
        update_if_changed(self.query_one("#watch-timeline-caption", Static), self.caption())
        series = self.timeline.side("watched")
        span = series.x[-1] if series is not None and series.x else 0
        self.query_one(TimelinePlot).show(View(self.timeline, self.selected, span), now=now)

    def caption(self) -> Content:
        series = self.timeline.side("watched")
        at = series.at(self.selected) if series is not None and self.selected else None
        if series is None or at is None:
            return Content.styled(t("timeline.watch_empty"), "dim italic")
        kind = t("timeline.counted" if series.counted[at] else "timeline.estimated")
        parts: list[Content | tuple[str, str] | str] = [
            (f"#{series.x[at]}", "bold"), "  ", t("timeline.tokens", n=series.y[at], kind=kind)]
        read = series.cache_read[at]
        if read:
            parts.append(t("timeline.cache", n=read))
        for mark in series.marks:
            if mark.index == series.x[at]:
                parts += ["  ", ("▲ " + mark_text(mark), "$warning")]
        return Content.assemble(*parts)
