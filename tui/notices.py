"""Where notices appear: over the conversation, never over the right column's panels.

Textual stacks toasts at the bottom right, which is exactly where the right column's panels
are: two auto-pause notices at 80×24 covered the whole Context meter, three in a browser
covered Stages, Transcripts and Memory — the panels the notices were about. So on the main
screen the toast rack is kept over the conversation's pane (the left column below its tabs),
top-aligned there and never wider or taller than that pane: the newest History lines at its
bottom and the status line under it stay visible, and no notice ever covers a right-column
panel, at any size and with any layout rule (the pane's region is read after each layout,
not assumed). The watch screen does the same over its list of requests, so the selected
request's breakdown stays readable; modal screens keep Textual's own placement.

Auto-pause notices replace each other instead of stacking: a pause notice describes the
pause the run is in, so the next auto-pause makes the previous one stale (History keeps
every stage's "why" line for reading back); stages that fired in the same pause are named
together in one notice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.app import App
from textual.containers import Container
from textual.css.query import NoMatches
from textual.geometry import Region
from textual.notifications import Notification, Notify
from textual.screen import Screen
from textual.widgets._toast import ToastRack

from tui.i18n import t

PAUSE_SECONDS = 15  # long enough to read why a stage fired; the run waits meanwhile
RACK = "#textual-toastrack"  # the container Textual composes into every screen for toasts
# Narrower than this, a notice is a column of word pieces: when the pane is squeezed (the
# keys panel docked beside it at 80 columns), the notice takes this width anyway.
MIN_WIDTH = 30


@dataclass(frozen=True)
class Area:
    """Where a screen's notices go: the columns of one widget, the rows of another (the
    watch screen's list of requests is only as tall as its rows, its column is not)."""

    columns: str
    rows: str

    def region(self, screen: Screen[Any]) -> Region:
        """The area as ``screen`` is laid out now (empty when either widget is hidden)."""
        across, down = screen.query_one(self.columns).region, screen.query_one(self.rows).region
        return Region(across.x, down.y, across.width, down.height)


CONVERSATION = Area("#tabs > ContentSwitcher", "#tabs > ContentSwitcher")  # History's pane


def place_rack(screen: Screen[Any], area: Area) -> None:
    """Put ``screen``'s toast rack over ``area``, as the screen is laid out now."""
    try:
        rack = screen.query_one(RACK, Container)
        region = area.region(screen)
    except NoMatches:  # notifications are off (tests), or the area is not composed yet
        return
    if not region.width or not region.height:  # the area is hidden (a panel is maximised)
        return
    rack.add_class("-over-area")  # docked top, toasts to the left (app.tcss)
    styles = rack.styles
    styles.margin = (region.y, 0, 0, region.x)
    styles.width = max(region.width, min(MIN_WIDTH, screen.size.width - region.x))
    styles.max_height = region.height


def keep_notices_over(screen: Screen[Any], area: Area) -> None:
    """Show ``screen``'s notices over ``area``, now and after every layout of the screen."""

    def place(_: Screen[Any]) -> None:
        place_rack(screen, area)

    place(screen)
    screen.screen_layout_refresh_signal.subscribe(screen, place)


def withdraw(app: App[int], notification: Notification) -> None:
    """Take one notice off the screen before its time, as a click on it does.

    Textual has no public call for this; this does what its toast does when it expires
    (forget the notification, remove the toast's holder — removing only the toast, as
    ``clear_notifications`` would, leaves its empty holder taking space in the rack)."""
    app._unnotify(notification, refresh=False)
    holder_id = ToastRack._toast_id(notification)
    for screen in app.screen_stack:
        for holder in screen.query(f"#{holder_id}"):
            holder.remove()


@dataclass
class PauseNotice:
    """The one auto-pause notice on screen. Showing a new one withdraws the last; stages
    that fired in the same pause (before the same model call) share one notice, so the
    replacement loses none of them."""

    shown: Notification | None = None
    pause: int = -1  # the model calls made when the shown notice's pause came
    fired: list[tuple[str, str]] = field(default_factory=list)  # (stage, why) in that pause

    def show(self, app: App[int], pause: int, stage: str, why: str) -> None:
        if pause != self.pause:
            self.pause, self.fired = pause, []
        self.fired.append((stage, why))
        if self.shown is not None:
            withdraw(app, self.shown)
        title = t("notice.auto_paused_title", stage=", ".join(name for name, _ in self.fired))
        message = t("notice.auto_paused", why="\n".join(text for _, text in self.fired))
        self.shown = Notification(message, title, "information", PAUSE_SECONDS)
        # At once, not posted as ``notify`` does: a notice still in the queue could not be
        # withdrawn by the next stage of the same pause.
        app._on_notify(Notify(self.shown))
