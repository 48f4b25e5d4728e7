"""The status line under the conversation: run state, pace and model calls — and the pace.

A presenter changes pace with ``+``/``-``; the pace is a multiplier on two delays the engine
already has knobs for — the gate's pause before each main model call and the scripted
provider's delay per streamed word — so speeding up never skips anything, it only waits
less. At the top speed both delays are zero.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from core.events import Manager
from core.sources import MAX_SPEED
from tui.i18n import t
from tui.managers import managers_label
from tui.widgets.redraw import update_if_changed

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1000.0)


def next_speed(speed: float, direction: int) -> float:
    """The neighbouring step of :data:`SPEEDS` (from the step nearest to ``speed``)."""
    nearest = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed))
    return SPEEDS[max(0, min(len(SPEEDS) - 1, nearest + direction))]


class RunStatus(Static):
    """One line: ``▶ playing   speed ×2   model calls 7``, and any break switch in force.

    A switched-off protection makes every oddity on screen deliberate, so it is said here
    in the warning colour for as long as the run has it — a room must never mistake a
    teaching break for a bug.
    """

    def show(self, *, finished: bool, live: bool, paused: bool, speed: float,
             calls: int, breaks: tuple[str, ...] = (),
             managers: tuple[str, ...] = (Manager.PIPELINE,),
             own: bool = True, at_end: bool = False) -> None:
        if finished:  # only ctxlab's own session can be replaced by another scenario (o)
            state = t("status.finished" if own else "status.finished_source")
        elif at_end:  # a replay held at its end: going back is what is left
            state = t("status.at_end")
        elif live:
            state = t("status.live")
        elif paused:  # a step is a model call of ctxlab's own, a request of a replay
            state = t("status.paused" if own else "status.paused_source")
        else:
            state = t("status.playing")
        pace = t("status.max") if speed >= MAX_SPEED else f"×{speed:g}"
        line = Content(t("status.line", state=state, pace=pace, calls=calls))
        if managers != (Manager.PIPELINE,):  # the default goes unsaid
            line = Content.assemble(line, "   ",
                                    t("status.manager", manager=managers_label(managers)))
        if breaks:
            line = Content.assemble(line, "   ", (
                "⚠ " + t("status.broken", switches=", ".join(breaks)), "bold $warning"))
        update_if_changed(self, line)
