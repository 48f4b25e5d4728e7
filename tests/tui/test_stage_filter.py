"""Stages at scale: a long replay lists hundreds of stages, and a learner wants one kind."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.events import Stage
from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.commands import CtxlabCommands
from tui.i18n import t
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def shown_stages(timeline: StageTimeline) -> list[str]:
    return [str(timeline.get_row_at(i)[1]) for i in range(timeline.row_count)]


async def test_f_cycles_a_stage_filter_named_in_the_border(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        every = shown_stages(timeline)
        names = list(dict.fromkeys(every))  # in first-firing order
        assert len(names) > 2
        await pilot.press("4")  # focus Stages
        for name in names:
            await pilot.press("f")
            await pilot.pause(0.05)
            assert shown_stages(timeline) == [s for s in every if s == name]
            assert t("stages.filter", stage=name, n=every.count(name), total=len(every)) \
                in str(timeline.border_subtitle)
        # A stage that fires while filtered joins only if it matches; the filter holds.
        timeline.add_stage(Stage(stage=names[-1], before_chars=10, after_chars=5,
                                 before_messages=2, after_messages=1))
        timeline.add_stage(Stage(stage=names[0], before_chars=10, after_chars=5,
                                 before_messages=2, after_messages=1))
        await pilot.pause(0.1)
        assert set(shown_stages(timeline)) == {names[-1]}
        # Enter still inspects the row under the cursor, by its own record.
        assert timeline.current_record() is timeline.stages[-2]
        await pilot.press("f")  # past the last name: every stage again
        await pilot.pause(0.05)
        assert shown_stages(timeline) == [*every, names[-1], names[0]]
        assert t("stages.filter_hint") in str(timeline.border_subtitle)


async def test_the_palette_offers_one_filter_per_stage_and_a_way_back(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        entries = {title: run for title, run, _ in CtxlabCommands(app.screen).entries()}
        title = t("palette.stage_filter", stage="snip_compact")
        assert title in entries and t("palette.stage_filter_all") not in entries
        entries[title]()
        await pilot.pause(0.1)
        assert set(shown_stages(timeline)) == {"snip_compact"}
        entries = {title: run for title, run, _ in CtxlabCommands(app.screen).entries()}
        entries[t("palette.stage_filter_all")]()
        await pilot.pause(0.1)
        assert len(shown_stages(timeline)) == len(timeline.stages)
