"""The Context meter formats what the request events carry: the bar marks the limits, and
the breakdown's message rows add up to the bar's chars, in a run and in a replay."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from core.compact.breakdown import MESSAGE_CATEGORIES, SENT_EVERY_CALL
from core.config import Thresholds
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE
from tests.tui.conftest import play_to_end, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.i18n import t
from tui.widgets.context_meter import ContextMeter, meter_bar
from tui.widgets.replay_panel import ReplayPanel


def test_bar_marks_target_and_trigger() -> None:
    limits = Thresholds(context_limit=1000)
    text = meter_bar(500, limits, width=50).plain
    assert len(text) == 50
    assert text.index("┊") == 32 and text.index("│") == 40  # 800 and 1000 of 1250
    assert meter_bar(5000, limits, width=50).plain.count("█") == 48  # scale grows past 125%


def shown(meter: ContextMeter) -> tuple[int, dict[str, int], str]:
    """What the panel shows: the bar's chars (as its figures line prints them), each
    breakdown row's chars by category, and the breakdown's text."""
    figures = str(meter.query_one("#meter-figures", Static).render())
    bar = int(figures.splitlines()[1].split(" /")[0].replace(",", ""))
    text = str(meter.query_one("#meter-breakdown", Static).render())
    rows = {}
    for category in (*MESSAGE_CATEGORIES, *SENT_EVERY_CALL):
        found = re.search(re.escape(t(f"cat.{category}")) + r"\s+([\d,]+)", text)
        if found:
            rows[category] = int(found.group(1).replace(",", ""))
    return bar, rows, text


@pytest.mark.anyio
async def test_a_paused_replay_shows_message_rows_that_add_up_to_the_bar(
        tmp_path: Path) -> None:
    def make(workspace: Path) -> ReplaySource:  # a small limit: ctxlab's side differs
        return ReplaySource(load_recording(CLAUDE), ReplayOptions(
            workdir=workspace, thresholds=Thresholds(context_limit=2_200)))

    app = CtxlabApp(AppConfig(scenario=None, source=make, workspace=tmp_path / "w",
                              theme="ctxlab-dark", display_workspace="~/replay",
                              paused=True))
    async with app.run_test(size=(200, 55)) as pilot:
        meter = app.query_one(ContextMeter)
        for request in (1, 2, 3, 4):
            await pilot.press("s")
            await wait_for(pilot, lambda n=request: len(meter.history) == n)
            await pilot.pause(0.1)
            assert app.paused
            bar, rows, text = shown(meter)
            assert bar == meter.chars > 0
            assert set(rows) <= set(MESSAGE_CATEGORIES)  # ctxlab's side: messages only
            assert sum(rows.values()) == bar
            assert not any(meter.breakdown[k] for k in set(MESSAGE_CATEGORIES) - set(rows))
            assert t("meter.messages", n=bar) in text
            assert bar == app.query_one(ReplayPanel).step.ctxlab_chars  # not the original's
        assert rows["images"] > 0  # the image the user sent, in ctxlab's own history
        assert rows["summaries"] > 0  # ctxlab's own summary: its side, not the original's


@pytest.mark.anyio
async def test_a_run_shows_what_is_sent_every_call_apart_from_the_bar(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        meter = app.query_one(ContextMeter)
        bar, rows, text = shown(meter)
        assert sum(rows.get(k, 0) for k in MESSAGE_CATEGORIES) == bar == meter.chars
        assert "thinking" not in rows  # no thinking in a scripted run: no row for it
        assert set(SENT_EVERY_CALL) <= set(rows) and rows["tools"] > 0 < rows["system"]
        assert t("meter.besides") in text
        # two columns: the messages on the left, what is sent besides on the right
        head = text.splitlines()[0]
        assert head.index(t("meter.messages", n=bar)) < head.index(t("meter.besides"))


@pytest.mark.anyio
async def test_before_the_first_call_the_meter_says_it_has_not_measured(make_app) -> None:  # type: ignore[no-untyped-def]
    """History already lists the request and its recalled memories before the first call;
    the meter showed "0 / 20,000 chars" and a column of zeros as if they weighed nothing.
    It now says nothing is measured yet, and shows the figures from the first call on."""
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.3)
        meter = app.query_one(ContextMeter)
        figures = str(meter.query_one("#meter-figures", Static).render())
        text = str(meter.query_one("#meter-breakdown", Static).render())
        assert t("meter.unmeasured") in figures and "≈0 tokens" not in figures
        assert figures.splitlines()[1].startswith("— /") and "0%" not in figures
        assert text == t("meter.unmeasured_breakdown")
        assert not re.search(re.escape(t(f"cat.{MESSAGE_CATEGORIES[0]}")) + r"\s+0\b", text)
        await pilot.press("s")
        await wait_for(pilot, lambda: len(meter.history) == 1)
        await pilot.pause(0.1)
        bar, _rows, text = shown(meter)
        assert bar == meter.chars > 0 and t("meter.unmeasured_breakdown") not in text
