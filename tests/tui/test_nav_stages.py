"""The next / previous stage of the filtered kind (``]``/``[``), the inspector's ``n``/``p``
within that kind, and the meaning of the current stage (``m``), in English and Chinese."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.tui.conftest import TINY_ZH, play_to_end, wait_for
from tui.app import CtxlabApp
from tui.i18n import t
from tui.screens.inspector import Inspector
from tui.why import stage_rule
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def selected(timeline: StageTimeline) -> tuple[int, str]:
    record = timeline.current_record()
    assert record is not None
    return record.index, record.event.stage


def notices(app: CtxlabApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_brackets_step_through_the_stages_of_the_filtered_kind(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        assert selected(timeline) == (9, "manual_compact")
        await pilot.press("left_square_bracket")  # unfiltered: any kind
        assert selected(timeline) == (8, "snip_compact")
        timeline.set_filter("fit_tool_results")
        timeline.move_cursor(row=0)
        await pilot.press("right_square_bracket")
        assert selected(timeline) == (2, "fit_tool_results")
        await pilot.press("right_square_bracket")
        assert selected(timeline) == (5, "fit_tool_results")  # past #3 and #4, other kinds
        await pilot.press("right_square_bracket")  # none after it, and the run has ended
        await pilot.pause(0.1)
        assert selected(timeline) == (5, "fit_tool_results")
        assert t("nav.no_next", kind="fit_tool_results") in notices(app)
        await pilot.press("left_square_bracket")
        assert selected(timeline) == (2, "fit_tool_results")


async def test_a_bracket_plays_on_to_a_kind_not_reached_yet(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.1)
        timeline = app.query_one(StageTimeline)
        timeline.set_filter("snip_compact")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: any(r.event.stage == "snip_compact"
                                          for r in timeline.stages))
        await wait_for(pilot, lambda: app.source is not None and not app.source.seeking)
        await pilot.pause(0.2)
        assert app.paused and not app.finished
        assert [r.event.stage for r in timeline.stages][-1] == "snip_compact"
        assert len(timeline.stages) == 6  # it went past five stages of other kinds
        assert selected(timeline) == (6, "snip_compact")


async def test_the_inspector_moves_within_the_filtered_kind(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        timeline.set_filter("fit_tool_results")
        timeline.move_cursor(row=0)
        await pilot.press("i")
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, Inspector) and screen.record.index == 1
        await pilot.press("n")
        await pilot.pause(0.3)
        assert isinstance(app.screen, Inspector) and app.screen.record.index == 2
        await pilot.press("right_square_bracket")
        await pilot.pause(0.3)
        assert isinstance(app.screen, Inspector) and app.screen.record.index == 5
        await pilot.press("p")
        await pilot.pause(0.3)
        assert isinstance(app.screen, Inspector) and app.screen.record.index == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_m_says_what_the_selected_stage_means(
        make_app: Callable[..., CtxlabApp], lang: str) -> None:
    app = make_app(**({"scenario": TINY_ZH, "lang": "zh"} if lang == "zh" else {}))
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        record = next(r for r in timeline.stages if r.event.stage == "micro_compact")
        timeline.move_cursor(row=timeline.get_row_index(str(record.index)))
        app.clear_notifications()
        await pilot.press("m")
        await pilot.pause(0.1)
        rule = stage_rule(record.event)
        assert rule and rule == t(f"rule.{record.event.stage}")
        assert notices(app) == [rule]
        titles = [str(n.title) for n in app._notifications]
        assert titles == [t("nav.meaning_title", stage="micro_compact")]
        if lang == "zh":
            assert "超过触发线" in rule
