"""Finding one's way in a run: the next or previous stage of the kind the Stages panel is
filtered to (``]``/``[``), the meaning of the current stage in one sentence (``m``), and the
search box over the History and the Stages (``ctrl+f``).

A stage already shown is selected; one not reached yet is played to, through the source's
own control (:meth:`~core.sources.Source.until_next_stage`, told the kind), so a replay or
the demo runs on until exactly that kind fires and pauses after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App

from core.sources import Capability
from tui.i18n import t
from tui.nav_search import Query
from tui.why import stage_meaning
from tui.widgets.conversation import Conversation
from tui.widgets.search_box import SearchBox
from tui.widgets.stage_timeline import StageTimeline

if TYPE_CHECKING:
    from core.sources import Source


class NavActions(App[int]):
    """Mixed into :class:`tui.app.CtxlabApp`."""

    if TYPE_CHECKING:
        source: Source | None

        def at_end(self) -> bool: ...
        def update_status(self) -> None: ...

    # -- the next / previous stage of a kind ----------------------------------------------------

    def action_next_kind(self) -> None:
        self.stage_row(1)

    def action_previous_kind(self) -> None:
        self.stage_row(-1)

    def stage_row(self, step: int) -> None:
        """``]`` (1) or ``[`` (-1): the next or previous Stages row of the filtered kind
        (any kind when unfiltered); past the newest, play on until that kind fires."""
        timeline = self.query_one(StageTimeline)
        shown = timeline.shown_records()
        current = timeline.current_record()
        at = shown.index(current) if current in shown else len(shown)
        goal = at + step
        if 0 <= goal < len(shown):
            timeline.move_cursor(row=goal)
            return
        source = self.source
        if step > 0 and source is not None and source.running and not self.at_end() \
                and source.offers(Capability.NEXT_STAGE):
            source.until_next_stage(timeline.only)
            self.update_status()
            return
        kind = timeline.only or t("nav.any_stage")
        self.notify(t("nav.no_next" if step > 0 else "nav.no_previous", kind=kind))

    # -- the meaning of the current stage -------------------------------------------------------

    def action_meaning(self) -> None:
        """The selected stage's meaning (else the newest's), in one sentence."""
        timeline = self.query_one(StageTimeline)
        stages = timeline.stages
        record = timeline.current_record() or (stages[-1] if stages else None)
        if record is None:
            self.notify(t("notice.no_stage"))
            return
        self.notify(stage_meaning(record.event), title=t("nav.meaning_title",
                                                         stage=record.event.stage), timeout=10)

    # -- search ---------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one(SearchBox).open()

    def on_search_box_changed(self, message: SearchBox.Changed) -> None:
        self.narrow_to(message.query)

    def narrow_to(self, query: Query) -> tuple[int, int]:
        """Both panels narrowed to ``query``; the matches in each, also shown in the box."""
        history = self.query_one(Conversation).narrow(query)
        stages = self.query_one(StageTimeline).set_search(query)
        self.query_one(SearchBox).show_count(history, stages, query)
        return history, stages
