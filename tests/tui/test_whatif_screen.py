"""The compare key on a replay opens the what-if screen: its table's numbers are the
WhatIf's, its plot has one line per strategy at each request's tokens, Enter lists a row's
facts; the scripted demo keeps the scenario comparison.

The screen is handed a fixed :class:`WhatIf` (``tests/core/report/whatif_sample.py``) through
its runner, so what is checked is what the screen shows of a result, not the strategies."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, ProgressBar, Static
from textual_plot.plot_widget import LinePlot

from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from core.whatif.model import WhatIf
from tests.core.report.whatif_sample import sample_whatif
from tests.tui.conftest import wait_for
from tui.app import CtxlabApp
from tui.cli.screenshots import REPLAY_FIXTURE
from tui.screens import whatif as screen_module
from tui.screens.whatif import WhatIfScreen
from tui.widgets.whatif_plot import WhatIfPlot

pytestmark = pytest.mark.anyio


def fixed_runner(result: WhatIf) -> Any:
    """A runner that reports progress through each strategy, then returns ``result``."""

    async def run(recording: Any, names: tuple[str, ...], progress: Any) -> WhatIf:
        for name in names:
            for request in range(1, result.requests + 1):
                progress(name, request, result.requests)
        return result

    return run


@pytest.fixture
def fixed(monkeypatch: pytest.MonkeyPatch) -> WhatIf:
    """Every what-if screen of the test shows :func:`sample_whatif`."""
    result = sample_whatif()
    monkeypatch.setattr(screen_module, "run_strategies", fixed_runner(result))
    monkeypatch.setattr(screen_module, "default_strategies",
                        lambda: tuple(run.name for run in result.strategies))
    return result


def replay_app(make_app: Callable[..., CtxlabApp]) -> CtxlabApp:
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(REPLAY_FIXTURE), ReplayOptions(workdir=workspace))

    return make_app(scenario=None, source=make, paused=True, display_workspace="~/replay")


async def open_whatif(pilot: Any) -> WhatIfScreen:
    app = pilot.app
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
    screen = app.screen
    assert isinstance(screen, WhatIfScreen)
    await wait_for(pilot, lambda: screen.done and any(
        plot._datasets for plot in screen.query(WhatIfPlot)))
    await pilot.pause(0.1)
    return screen


def number(text: str) -> int:
    return int(text.replace(",", ""))


async def test_the_compare_key_on_a_replay_shows_the_whatif_with_the_results_numbers(
        make_app: Callable[..., CtxlabApp], fixed: WhatIf) -> None:
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_whatif(pilot)
        assert screen.recording.path.name == REPLAY_FIXTURE.name
        table = screen.query_one(DataTable)
        assert [str(key.value) for key in table.rows] == [r.name for r in fixed.strategies]
        for run in fixed.strategies:
            cells = [str(cell) for cell in table.get_row(run.name)]
            assert cells[0] == run.name
            billed, cache, cost, peak, compactions, left, facts, rereads = cells[1:]
            assert number(billed) == run.billed_input == sum(
                r.usage.billed_input for r in run.requests) + run.side.billed_input
            assert int(cache.rstrip("%")) == round(run.cache_read_share * 100)
            assert cost == ("—" if run.cost is None else f"${run.cost:.4f}")
            assert number(peak) == run.peak_tokens == max(r.tokens for r in run.requests)
            assert number(compactions) == run.compactions
            assert [number(n) for n in left.split("/")] == [run.results_left,
                                                              run.results_recoverable]
            assert [number(n) for n in facts.split("/")] == [run.facts_kept, len(run.facts)]
            assert number(rereads) == run.rereads_after_drop
        lessons = str(screen.query_one("#whatif-lessons", Static).render())
        for run in fixed.strategies:
            assert f"{run.name}: {run.lesson}" in lessons
        note = str(screen.query_one("#whatif-note", Static).render())
        assert "The trajectory is the recorded one" in note and "not simulated" in note


async def test_the_plot_has_one_line_per_strategy_at_each_requests_tokens(
        make_app: Callable[..., CtxlabApp], fixed: WhatIf) -> None:
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_whatif(pilot)
        plot = screen.query_one(WhatIfPlot)
        lines = {label: data for label, data in zip(plot._labels, plot._datasets, strict=True)
                 if isinstance(data, LinePlot)}
        assert set(lines) == {"window", *(run.name for run in fixed.strategies)}
        assert list(lines["window"].y) == [fixed.window_tokens] * 2
        for run in fixed.strategies:
            assert list(lines[run.name].x) == [r.index for r in run.requests]
            assert list(lines[run.name].y) == [r.tokens for r in run.requests]
        assert len({lines[run.name].line_style for run in fixed.strategies}) == 3
        legend = str(screen.query_one("#whatif-legend", Static).render())
        assert all(run.name in legend for run in fixed.strategies)
        assert "── window 20k" in legend


async def test_enter_on_a_row_lists_that_strategys_facts_visible_or_not(
        make_app: Callable[..., CtxlabApp], fixed: WhatIf) -> None:
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_whatif(pilot)
        facts = screen.query_one("#whatif-facts", Static)
        assert str(facts.render()).strip() == ""  # on demand only
        screen.query_one(DataTable).focus()
        await pilot.press("down", "enter")
        await pilot.pause(0.1)
        s08 = fixed.strategy("s08")
        assert s08 is not None
        shown = str(facts.render())
        assert "s08: 1 of 3 facts still visible" in shown
        for check in s08.facts:
            line = next(line for line in shown.splitlines() if check.fact.detail in line)
            assert line.startswith("✔" if check.visible else "✖"), line
            assert re.search(rf"request {check.fact.needed_at}\b", line)
        await pilot.press("enter")  # the same row again: hidden
        await pilot.pause(0.1)
        assert str(facts.render()).strip() == ""


async def test_the_progress_follows_the_strategies_and_the_screen_leaves_with_escape(
        make_app: Callable[..., CtxlabApp], fixed: WhatIf) -> None:
    app = replay_app(make_app)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_whatif(pilot)
        status = str(screen.query_one("#whatif-status", Static).render())
        assert status.startswith("done: 3 strategies")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, WhatIfScreen))


async def test_the_screen_speaks_chinese(make_app: Callable[..., CtxlabApp],
                                         fixed: WhatIf) -> None:
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(REPLAY_FIXTURE), ReplayOptions(workdir=workspace))

    app = make_app(scenario=None, source=make, paused=True, lang="zh")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_whatif(pilot)
        headers = [str(column.label) for column in screen.query_one(DataTable).columns.values()]
        assert headers[:3] == ["策略", "计费输入", "缓存读取"]
        note = str(screen.query_one("#whatif-note", Static).render())
        assert note.startswith("轨迹就是录制下来的那一条")
        assert str(screen.query_one("#whatif-status", Static).render()).startswith("完成：3 种策略")


async def test_the_real_comparison_of_the_replay_fills_the_screen_with_its_numbers(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """No stand-in: the worker runs every strategy over the recording on screen, and each
    row is what ``compare_session`` gives for that recording."""
    from core.whatif.columns import RUN_COLUMNS, cell
    from core.whatif.run import compare_session_async
    from core.whatif.strategies import STRATEGIES, WhatIfOptions

    seen: list[tuple[str, int, int]] = []
    real = screen_module.run_strategies

    async def recorded(recording: Any, names: tuple[str, ...], progress: Any) -> WhatIf:
        def told(*args: Any) -> None:
            seen.append(args)
            progress(*args)

        return await real(recording, names, told)

    monkeypatch.setattr(screen_module, "run_strategies", recorded)
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_whatif(pilot)
        expected = await compare_session_async(load_recording(REPLAY_FIXTURE), WhatIfOptions())
        table = screen.query_one(DataTable)
        assert [str(key.value) for key in table.rows] == list(STRATEGIES)
        for run in expected.strategies:
            cells = [str(cell) for cell in table.get_row(run.name)][1:]
            assert cells == [cell(column, run) for column in RUN_COLUMNS], run.name
        assert {name for name, _, _ in seen} == set(STRATEGIES)


async def test_r_runs_the_comparison_again_after_it_failed(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure leaves no result; ``r`` must still start the strategies again (a transient
    error, such as a full disk under the archive, is worth a second try)."""
    result = sample_whatif()
    calls: list[tuple[str, ...]] = []

    async def fails_once(recording: Any, names: tuple[str, ...], progress: Any) -> WhatIf:
        calls.append(names)
        if len(calls) == 1:
            raise OSError("No space left on device")
        return result

    monkeypatch.setattr(screen_module, "run_strategies", fails_once)
    monkeypatch.setattr(screen_module, "default_strategies",
                        lambda: tuple(run.name for run in result.strategies))
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        status = screen.query_one("#whatif-status", Static)
        await wait_for(pilot, lambda: "stopped" in str(status.render()))
        assert "r runs it again" in str(status.render())
        assert not screen.done
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.done)
        assert len(calls) == 2
        assert [str(key.value) for key in screen.query_one(DataTable).rows] == [
            run.name for run in result.strategies]


async def test_a_repeated_strategy_name_is_run_once_and_the_progress_bar_counts_it_once(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """Names given twice would make the bar's total too large and point the status at the
    first copy: the screen keeps each name once, in the order first given."""
    import threading

    result = sample_whatif()
    release = threading.Event()
    asked: list[tuple[str, ...]] = []

    async def waits_on_the_last(recording: Any, names: tuple[str, ...],
                                progress: Any) -> WhatIf:
        asked.append(names)
        progress(names[-1], 3, 6)  # halfway through the last strategy
        release.wait(10)
        return result

    monkeypatch.setattr(screen_module, "run_strategies", waits_on_the_last)
    monkeypatch.setattr(screen_module, "default_strategies",
                        lambda: ("original", "s08", "original", "observation-masking", "s08"))
    app = replay_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
        screen = app.screen
        assert isinstance(screen, WhatIfScreen)
        bar = screen.query_one(ProgressBar)
        status = screen.query_one("#whatif-status", Static)
        try:
            await wait_for(pilot, lambda: "request 3 of 6" in str(status.render()))
            assert asked == [("original", "s08", "observation-masking")]
            assert screen.names == ("original", "s08", "observation-masking")
            assert bar.total == 3 and bar.progress == 0.5  # the one share reported
            assert str(status.render()).startswith("observation-masking (3/3)")
        finally:
            release.set()
        await wait_for(pilot, lambda: screen.done)


async def test_strategies_running_side_by_side_add_up_on_the_bar(
        make_app: Callable[..., CtxlabApp], fixed: WhatIf) -> None:
    """Strategies run in processes side by side, so their progress interleaves: the bar is
    the sum of each one's share, never one strategy's index plus another's share."""
    from textual.widgets import ProgressBar

    app = replay_app(make_app)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_whatif(pilot)
        screen.whatif = None  # as while running
        screen._shares = {}
        bar = screen.query_one(ProgressBar)
        first, second = screen.names[0], screen.names[1]
        for name, request, expected in ((second, 5, 0.5), (first, 5, 1.0), (second, 10, 1.5),
                                        (first, 10, 2.0)):
            screen.on_what_if_screen_advanced(WhatIfScreen.Advanced(name, request, 10))
            await pilot.pause()
            assert bar.progress == expected


async def test_a_plot_removed_before_its_mount_ran_is_dropped_quietly() -> None:
    """The what-if's result can arrive as its screen closes: the plot is mounted and
    removed before its mount ran, and must go without an error."""
    from textual.app import App

    class Host(App[None]):
        pass

    app = Host()
    async with app.run_test() as pilot:
        plot = WhatIfPlot(sample_whatif())
        app.screen.mount(plot)
        plot.remove()
        await pilot.pause(0.1)
        assert not plot.is_attached
    assert app.return_code in (None, 0)
