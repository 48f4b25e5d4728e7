"""The status line under the conversation: run state, pace and model calls — and the pace.

A presenter changes pace with ``+``/``-``; the pace is a multiplier on two delays the engine
already has knobs for — the gate's pause before each main model call and the scripted
provider's delay per streamed word — so speeding up never skips anything, it only waits
less. At the top speed both delays are zero.

The line is one row in a column that can be narrow, and a cut-off end would hide exactly
what matters most there: which protection a break switch turned off. So it is fitted to
its width: first the keys' hint of the state goes, then the pace and call count, then who
manages the context; only then is the state itself shortened — never the break switches.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.content import Content
from textual.widgets import Static

from core.events import Manager
from core.sources import MAX_SPEED
from tui.i18n import t
from tui.managers import managers_label
from tui.widgets.redraw import update_if_changed

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1000.0)
GAP = "   "
HINT = " — "  # what follows it in a state is the keys to press: the first thing to go


def next_speed(speed: float, direction: int) -> float:
    """The neighbouring step of :data:`SPEEDS` (from the step nearest to ``speed``)."""
    nearest = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed))
    return SPEEDS[max(0, min(len(SPEEDS) - 1, nearest + direction))]


@dataclass(frozen=True)
class StatusParts:
    """The line's pieces, from the most to the least expendable once it has to shrink."""

    state: str
    pace: str  # speed and model calls
    manager: Content | None
    broken: Content | None  # never shortened: a room must not mistake a break for a bug

    def candidates(self) -> list[Content]:
        """The line in ever shorter forms (the last one may still be too wide)."""
        short = self.state.split(HINT)[0]
        forms = [(self.state, self.pace, self.manager), (short, self.pace, self.manager),
                 (short, None, self.manager), (short, None, None)]
        return [self.join(Content(state), pace, manager) for state, pace, manager in forms]

    def join(self, state: Content, pace: str | None, manager: Content | None) -> Content:
        parts = [part for part in (state, pace, manager, self.broken) if part]
        return Content(GAP).join([p if isinstance(p, Content) else Content(p) for p in parts])

    def fit(self, width: int) -> Content:
        """The fullest form within ``width`` cells; else the state cut to leave the break
        switches whole — down to its mark alone (``‖ …``) — and only when not even that
        fits, the line cut at the end (``width`` 0: not laid out yet, the full line)."""
        forms = self.candidates()
        if width <= 0:
            return forms[0]
        for form in forms:
            if form.cell_length <= width:
                return form
        tail = Content.assemble(GAP, self.broken) if self.broken else Content("")
        room = width - tail.cell_length
        short = Content(self.state.split(HINT)[0])
        if room < 2:  # not even the state's mark beside them: the start of the line
            return forms[-1].truncate(width, ellipsis=True)
        return Content.assemble(short.truncate(room, ellipsis=True), tail)


class RunStatus(Static):
    """One line: ``▶ playing   speed ×2   model calls 7``, and any break switch in force.

    A switched-off protection makes every oddity on screen deliberate, so it is said here
    in the warning colour for as long as the run has it — a room must never mistake a
    teaching break for a bug. A run that failed says so, with its error, not "finished".
    """

    parts: StatusParts | None = None

    def show(self, *, finished: bool, live: bool, paused: bool, speed: float,
             calls: int, breaks: tuple[str, ...] = (),
             managers: tuple[str, ...] = (Manager.PIPELINE,),
             own: bool = True, at_end: bool = False, failure: str | None = None,
             jumping: bool = False, going_to: int | None = None) -> None:
        if finished and failure is not None:  # the verdict of core.events.outcome
            state = t("status.failed", reason=" ".join(failure.split()))
        elif finished:  # only ctxlab's own session can be replaced by another scenario (o)
            state = t("status.finished" if own else "status.finished_source")
        elif going_to is not None:  # a seek (g, S) on its way: no pace, no pause
            state = t("status.going_to", n=going_to)
        elif jumping:  # n on its way to the next compaction
            state = t("status.jumping")
        elif at_end:  # a replay held at its end: going back is what is left
            state = t("status.at_end")
        elif live:
            state = t("status.live")
        elif paused:  # a step is a model call of ctxlab's own, a request of a replay
            state = t("status.paused" if own else "status.paused_source")
        else:
            state = t("status.playing")
        pace = t("status.max") if speed >= MAX_SPEED else f"×{speed:g}"
        manager = None if managers == (Manager.PIPELINE,) else Content(  # the default: unsaid
            t("status.manager", manager=managers_label(managers)))
        broken = Content.styled("⚠ " + t("status.broken", switches=", ".join(breaks)),
                                "bold $warning") if breaks else None
        self.parts = StatusParts(state, t("status.pace", pace=pace, calls=calls), manager,
                                 broken)
        self.refit()

    def refit(self) -> None:
        if self.parts is not None:
            update_if_changed(self, self.parts.fit(self.content_size.width))

    def on_resize(self, event: events.Resize) -> None:
        self.refit()
