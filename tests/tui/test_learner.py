"""For the learner: the welcome card, auto-pause with why a stage fired, session dividers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from textual.widgets import Static

from core.config import Thresholds
from core.events import Stage
from tests.tui.conftest import FIXTURES, TINY, play_to_end, wait_for
from tui.app import CtxlabApp
from tui.screens.welcome import WelcomeCard
from tui.why import stage_hint, stage_rule, thresholds_in_force, why_fired
from tui.widgets.conversation import Conversation, StageMark
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio
SESSIONS = str(FIXTURES / "sessions.yaml")


def stage(name: str, chars: int = 28_775, messages: int = 11) -> Stage:
    return Stage(stage=name, before_chars=chars, after_chars=chars // 2,
                 before_messages=messages, after_messages=messages)


def test_why_names_the_numbers_that_crossed() -> None:
    limits = Thresholds(context_limit=20_000, max_messages=50)
    assert why_fired(stage("micro_compact"), limits).startswith("28,775 chars > trigger 20,000")
    assert why_fired(stage("snip_compact", messages=53), limits).startswith("53 messages > 50")
    assert "keep_recent 3" in thresholds_in_force(stage("micro_compact"), limits)
    assert stage_rule(stage("snip_compact")).endswith("never split.")
    # Another agent's stage has no row in the stage table: no why line, no invented rule —
    # not even under a name the pipeline uses too (a replay's manual_compact is Claude Code's).
    for theirs in (stage("their_compaction"), replace(stage("manual_compact"), by="claude-code")):
        assert why_fired(theirs, limits) == stage_hint(theirs) == ""
        assert stage_rule(theirs) == thresholds_in_force(theirs, limits) == ""
    assert stage_rule(stage("manual_compact")) and stage_hint(stage("manual_compact"))


async def test_a_demo_waits_behind_the_welcome_card_until_play(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True, welcome=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.5)
        assert isinstance(app.screen, WelcomeCard)
        text = str(app.screen.query_one("#welcome-body", Static).render())
        assert "What to watch" in text and "one model call" in text
        assert app.calls == 0 and app.paused
        await pilot.press("s")  # step: exactly one model call
        await wait_for(pilot, lambda: app.calls == 1)
        await pilot.pause(0.3)
        assert app.calls == 1 and not isinstance(app.screen, WelcomeCard)


async def test_without_a_key_the_card_says_why_it_is_a_demo(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True, welcome=True, demo_reason=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        assert "ANTHROPIC_API_KEY" in str(app.screen.query_one("#welcome-no-key").render())
        await pilot.press("escape")  # look around: stays paused
        await pilot.pause(0.2)
        assert app.paused and app.calls == 0


async def test_auto_pause_stops_at_each_new_kind_of_stage_and_says_why(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(auto_pause=True)
    async with app.run_test(size=(200, 55)) as pilot:
        timeline = app.query_one(StageTimeline)
        # the pause and the stage's row arrive as separate messages: wait for both
        await wait_for(pilot, lambda: app.paused and bool(timeline.stages))
        first = timeline.stages[0].event
        await pilot.pause(0.2)
        notes = [(str(n.title), str(n.message)) for n in app._notifications]
        why = why_fired(first, app.limits())
        assert " > " in why
        assert any(first.stage in title and why in message for title, message in notes)
        kinds = {first.stage}
        while not app.finished:
            app.source.resume()
            await wait_for(pilot, lambda: app.paused or app.finished)
            kinds |= {r.event.stage for r in app.query_one(StageTimeline).stages}
        # Paused once per kind (the gate is closed only at a kind's first firing).
        assert len(kinds) >= 3
        marks = [w for w in app.query_one(Conversation).all_items()
                 if isinstance(w, StageMark)]
        assert marks and all("why:" in m.plain() for m in marks)


async def test_a_stage_marks_why_is_told_under_the_limits_in_force_when_it_came(
        make_app: Callable[..., CtxlabApp]) -> None:
    """A History mark is built when it is first shown (most of a fast replay's never are),
    but its "why" states the limits in force when the stage came, not when it is drawn."""
    app = make_app(paused=True)
    async with app.run_test(size=(120, 40)):
        event, before = stage("micro_compact"), app.limits()
        why = app.stage_why(event)
        assert app.source is not None
        app.source.set_thresholds(replace(before, context_limit=before.context_limit * 2))
        assert app.limits() != before
        assert why() == why_fired(event, before) != why_fired(event, app.limits())


async def test_a_new_session_starts_under_a_divider(make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=SESSIONS)
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        dividers = [str(w.render()) for w in app.query(".msg-divider")]
        assert dividers == [" session 2 of 2 "]


async def test_one_session_has_no_divider(make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=TINY)
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        assert not app.query(".msg-divider")
