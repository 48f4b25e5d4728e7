"""What the workbench does for a learner: the welcome card, pauses at each new kind of
stage with why it fired, and the inspector reached from History.

The auto-pause must act *while the engine runs*, not when the UI gets round to drawing: it
has to pause before the next model call. So :meth:`LearnerActions.observe` is a sink of the
session's event stream, called synchronously for every event before the UI's bridge (it only
reads and flips flags, and pauses through the source's public ``pause`` capability), and the
drawing happens later, in the ordinary message handlers.
(Session dividers need no such care: the engine's ``session_start`` event says where.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App

from core import events as ev
from core.sources import Capability
from tui.i18n import t
from tui.notices import PauseNotice
from tui.why import why_fired
from tui.widgets.stage_timeline import StageTimeline

if TYPE_CHECKING:
    from core.config import Thresholds
    from core.sources import Source
    from tui.app_config import AppConfig
    from tui.stage_diff import StageRecord


def inspector_records(timeline: StageTimeline, record: StageRecord) -> list[StageRecord]:
    """What the inspector's ``n``/``p`` step through: the stages the Stages panel shows
    (its filter and search), with ``record`` in its place when it is not one of them (a
    stage opened from the History)."""
    shown = timeline.shown_records()
    if record not in shown:
        shown = sorted([*shown, record], key=lambda r: r.index)
    return shown


class LearnerActions(App[int]):
    """Mixed into :class:`tui.app.CtxlabApp`."""

    if TYPE_CHECKING:
        config: AppConfig
        source: Source | None
        workspace: Path
        generation: int
        scenario_title: str

        def limits(self) -> Thresholds: ...
        def update_status(self) -> None: ...

    _observed_generation = -1
    _kinds_seen: set[str]
    _requests_seen = 0
    _pause_notice: PauseNotice | None = None

    # -- the welcome card -----------------------------------------------------------------------

    def show_welcome(self) -> None:
        from tui.screens.welcome import WelcomeCard

        source = self.source

        def chosen(choice: str | None) -> None:
            if source is not None and choice == "play" and source.offers(Capability.PAUSE):
                source.resume()
            elif source is not None and choice == "step" and source.offers(Capability.STEP):
                source.step()
            self.update_status()

        if source is not None and source.offers(Capability.PAUSE):
            source.pause()  # the run waits behind the card
        self.update_status()
        self.push_screen(WelcomeCard(self.scenario_title or str(self.config.scenario),
                                     self.config.auto_pause, self.config.demo_reason), chosen)

    # -- engine side: called synchronously for every event ---------------------------------------

    def observe(self, event: ev.Event) -> None:
        if self._observed_generation != self.generation:  # a new run: start over
            self._observed_generation = self.generation
            self._kinds_seen = set()
        if isinstance(event, ev.ModelRequest):  # a pause is known by the calls before it,
            self._requests_seen += 1  # counted across runs, so no two pauses share one
        if isinstance(event, ev.Stage) and event.stage not in self._kinds_seen:
            self._kinds_seen.add(event.stage)
            source = self.source
            if (self.config.auto_pause and self.config.scenario is not None
                    and source is not None and source.offers(Capability.PAUSE)):
                source.pause()  # before the next model call
                self.call_later(self.announce_pause, event, self._requests_seen)

    # -- UI side ----------------------------------------------------------------------------------

    def announce_pause(self, event: ev.Stage, pause: int) -> None:
        """Say why the run paused, in place of the previous pause's notice (tui.notices);
        ``pause`` tells the stages of one pause from the next."""
        if self._pause_notice is None:
            self._pause_notice = PauseNotice()
        self._pause_notice.show(self, pause, event.stage, why_fired(event, self.limits()))
        self.update_status()

    def stage_why(self, event: ev.Stage) -> Callable[[], str]:
        """Why the stage fired under the limits in force now, worked out when a History
        mark is built (a fast replay's marks mostly never are)."""
        limits = self.limits()
        return lambda: why_fired(event, limits)

    def action_toggle_auto_pause(self) -> None:
        self.config.auto_pause = not self.config.auto_pause
        self.notify(t("notice.auto_pause_on" if self.config.auto_pause
                      else "notice.auto_pause_off"))

    # -- the inspector, from Stages or from a stage mark in History -------------------------------

    def open_inspector(self, record: StageRecord) -> None:
        from tui.screens.inspector import Inspector

        records = inspector_records(self.query_one(StageTimeline), record)
        self.push_screen(Inspector(record, self.workspace, records=records,
                                   limits=self.limits()))

    def on_conversation_inspect_stage(self, message: Any) -> None:
        records = self.query_one(StageTimeline).stages
        record = next((r for r in records if r.event is message.event), None)
        if record is not None:
            self.open_inspector(record)
