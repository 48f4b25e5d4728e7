"""A tab that shows one side's latest request at a time: the Items and Diff tabs.

Both follow the same thing — each side's last requests (ctxlab's, a replay's recorded
original: :class:`core.views.sides.Sides`) — and show one side at a time, ``x`` switching
to the other where a replay has two. Both draw only while they show: a hidden tab marks
itself stale and draws when it is opened, so a long replay at full speed does not measure
items or compare histories nobody is looking at; it does not even fold the requests until
it is opened (they wait in a backlog, folded in order when it is).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widget import Widget

from core import events as ev
from core.events import Event
from core.views.sides import Side, Sides
from tui.i18n import t
from tui.routing import Routed, RunInfo, Turns, handles
from tui.widgets.redraw import shown

# The events the requests' fold reads (core.views.requests): the requests, their answers'
# figures, a replay's steps and ratio, and where a run starts again.
FOLDED = (ev.ModelRequest, ev.ModelResponse, ev.ReplayStep, ev.ReplayStart, ev.RunStart,
          ev.Stage)


if TYPE_CHECKING:
    _Widget = Widget  # what it is mixed into: the checker sees the widget's own members
else:
    _Widget = object  # a mixin at run time: the tab's widget class comes after it


# ``x``: the other side. Each tab lists it in its own BINDINGS (Textual reads a widget
# class's bindings, and this mixin is not one).
SWITCH_SIDE: list[BindingType] = [Binding("x", "switch_side", "key.switch_side")]


def side_label(name: str) -> str:
    return t(f"items.side_{name}")


class SidePanel(Routed, _Widget):
    """Mixed into a tab's widget: the sides it follows, the one it shows, when it draws.
    A subclass says whether it needs the items' ages and draws in :meth:`draw`."""

    track_ages: ClassVar[bool] = True  # the items' age in requests (the diff needs none)

    def follow_sides(self) -> None:
        self.sides = Sides(ages=self.track_ages)
        self.side = ""  # the side shown; "" until a request came
        self._stale = False
        # Events not folded yet: a hidden tab keeps them for when it is opened (a replay
        # at full speed need not date every item of every request for a closed tab).
        self._backlog: deque[Event] = deque()
        self._catching_up = False
        self._showing: bool | None = None  # during a batch: whether the tab is shown

    def reset(self, run: RunInfo | None = None) -> None:
        self.follow_sides()
        self._stale = True
        self.redraw_once(self.redraw)

    def _open_batch(self) -> None:
        super()._open_batch()
        self._showing = None  # found at the batch's first event

    def _close_batch(self) -> list[Callable[[], Any]]:
        redraws = super()._close_batch()
        if self._showing is False and self._backlog and not self._catching_up \
                and self.is_mounted and shown(self):
            self.start_catch_up()  # opened while the batch was routed, after its Show event
        return redraws

    def showing(self) -> bool:
        """Whether the tab is shown, found once per batch: a replay's batch brings thousands
        of events, and finding it walks up to the screen. A tab opened or closed meanwhile
        is still right: its backlog waits for the Show event, a hidden tab does not draw."""
        if self._redraws is None:
            return self.is_mounted and shown(self)
        if self._showing is None:
            self._showing = self.is_mounted and shown(self)
        return self._showing

    @handles(*FOLDED)
    def follow(self, event: Event) -> None:
        showing = self.showing()
        if self._backlog or not showing:  # folded in order later
            self._backlog.append(event)
            if showing and not self._catching_up:  # shown again without a Show event
                self.start_catch_up()
            return
        if self.fold(event):
            self.redraw_once(self.redraw)

    def fold(self, event: Event) -> bool:
        """Fold one event; whether it changed what the tab shows."""
        known = len(self.sides.names())
        name = self.sides.see(event)
        if name is None:
            return False
        if len(self.sides.names()) != known:  # a second side: ``x`` now switches
            self.refresh_bindings()
        self.side = self.side or name
        self._stale = True
        return True

    def on_show(self, event: events.Show) -> None:
        if self._backlog:
            self.start_catch_up()
        else:
            self.redraw()

    def start_catch_up(self) -> None:
        self._catching_up = True
        self.run_worker(self.catch_up(), group="catch-up", exclusive=True)

    async def catch_up(self) -> None:
        """Fold what came while the tab was hidden, in order, giving the event loop a turn
        every :data:`~tui.routing.SLICE` seconds; then draw. What comes meanwhile joins
        the backlog's end."""
        try:
            turns = Turns()
            while self._backlog:
                self.fold(self._backlog.popleft())
                await turns.give()
        finally:
            self._catching_up = False
        self.redraw()

    def shown_side(self) -> Side | None:
        return self.sides.get(self.side)

    def redraw(self) -> None:
        if not self._stale or not self.is_mounted or not shown(self):
            return
        self._stale = False
        self.draw()

    def draw(self) -> None:
        raise NotImplementedError

    def others(self) -> str:
        """The header's note that ``x`` shows the other side (empty with one side)."""
        others = [n for n in self.sides.names() if n != self.side]
        return t("items.switch", side=side_label(others[0])) if others else ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_side":  # only a replay has two sides
            return len(self.sides.names()) > 1
        return True

    def action_switch_side(self) -> None:
        names = self.sides.names()
        if len(names) < 2:
            return
        self.side = names[(names.index(self.side) + 1) % len(names)]
        self._stale = True
        self.redraw()
