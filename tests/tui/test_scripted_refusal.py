"""A scenario's scripted "prompt is too long" is told as the script's, not as an API's: a
learner reading "the API said the prompt is too long (5,036 chars sent)" beside a 20,000
limit concludes that the limit is wrong."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Static

from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.screens.inspector import Inspector
from tui.why import why_fired
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("scenario", "lang", "said", "not_said"), [
    ("refactor-auth", "en", "the scenario's script made this call fail", "the API said"),
    ("refactor-auth-zh", "zh", "场景脚本让这次调用以“提示过长”失败", "API 回答提示过长"),
])
async def test_a_scripted_overflow_says_it_is_the_scripts_and_why_an_api_refuses(
        make_app: Callable[..., CtxlabApp], scenario: str, lang: str, said: str,
        not_said: str) -> None:
    app = make_app(scenario=scenario, lang=lang)
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        record = next(r for r in timeline.stages if r.event.stage == "reactive_compact")
        assert record.event.refusal_scripted
        assert record.event.refusal == "prompt is too long: 212000 tokens > 200000 maximum"
        why = why_fired(record.event, app.limits())
        assert said in why and not_said not in why
        assert f"{record.event.before_chars:,}" in why and "HTTP 400" in why
        app.open_inspector(record)
        await pilot.pause(0.3)
        assert isinstance(app.screen, Inspector)
        pane = str(app.screen.query_one("#inspector-why").query_one(Static).render())
        assert said in pane.replace("\n", "")
