"""The Timeline tab and the watch screen's timeline, as a person uses them: what the plot
draws equals the events' figures (ctxlab's own run, a replay's two sides, a watched
client), the cursor moves with the keys, and Enter shows that request everywhere — a
replay seeks there, a finished run of ctxlab's own shows it in the model view."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

import tui.app
from core import events as ev
from core.sources import Capability
from core.sources.agent.session import AgentSession
from core.sources.replay import load_recording
from core.sources.replay.limits import LimitMode
from core.sources.replay.source import ReplayOptions, ReplaySource
from core.views.window import trigger, window_of
from tests.core.sources.replay.conftest import FIXTURES
from tests.tui.conftest import play_to_end, replayed, wait_for
from tui import panels
from tui.app import AppConfig, CtxlabApp
from tui.cli.watch_scene import canned_watch_app, settle_watch
from tui.widgets.context_meter import ContextMeter
from tui.widgets.model_view import ModelView
from tui.widgets.replay_panel import ReplayPanel
from tui.widgets.timeline import TimelinePanel
from tui.widgets.timeline_plot import TimelinePlot
from tui.widgets.watch_timeline import WatchTimeline

pytestmark = pytest.mark.anyio
COMPACTING = FIXTURES / "claude-code-2.1.197" / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"


def lines_drawn(plot: TimelinePlot) -> list[list[int]]:
    """The y of every side's line or dot, in drawing order (the sides in SIDES order);
    the thresholds, flat two-point lines drawn before them, are left out."""
    shown = plot.shown
    triggers = len([s for s in shown.timeline.series if s.threshold is not None]) \
        if shown is not None else 0
    lines = [[int(v) for v in np.asarray(d.y)] for d in plot._datasets
             if type(d).__name__ in ("LinePlot", "ScatterPlot")]
    return lines[triggers:]


def marks_drawn(plot: TimelinePlot) -> list[float]:
    return [float(line.x) for line in plot._v_lines]


async def open_timeline(pilot: Pilot[Any]) -> TimelinePanel:
    app = pilot.app
    await pilot.press(panels.keys()["timeline"])
    await pilot.pause(0.1)
    assert app.query_one(TabbedContent).active == "tab-timeline"
    panel = app.query_one(TimelinePanel)
    assert app.focused is panel
    return panel


async def drawn(pilot: Pilot[Any], panel: TimelinePanel) -> TimelinePlot:
    """Until the plot shows what the panel holds (it redraws a few times a second)."""
    plot = panel.query_one(TimelinePlot)
    await wait_for(pilot, lambda: plot.shown is not None
                   and plot.shown.timeline == panel.timeline
                   and plot.shown.selected == panel.cursor)
    return plot


def recording(events: list[ev.Event]) -> type[AgentSession]:
    class Recorded(AgentSession):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.subscribe(events.append)

    return Recorded


async def test_ctxlab_runs_timeline_draws_its_main_calls_and_its_cursor_moves(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[ev.Event] = []
    monkeypatch.setattr(tui.app, "AgentSession", recording(events))
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        panel = await open_timeline(pilot)
        plot = await drawn(pilot, panel)
        mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
        assert len(mains) >= 3
        ours = lines_drawn(plot)[-1]
        assert ours == [m.est_tokens for m in mains]  # the scripted model: the estimates
        stages = panel.timeline.marks
        assert stages and len([e for e in events if isinstance(e, ev.Stage)]) == len(stages)
        assert {m.index for m in stages} <= set(marks_drawn(plot))
        newest = len(mains)
        assert panel.cursor == newest and f"request {newest} of {newest}" in \
            str(panel.query_one("#timeline-caption").render())
        await pilot.press("left", "left")
        assert panel.cursor == newest - 2
        plot = await drawn(pilot, panel)
        assert marks_drawn(plot)[-1] == newest - 2  # the cursor is the last line drawn
        caption = str(panel.query_one("#timeline-caption").render())
        assert f"request {newest - 2} of {newest}" in caption
        assert f"{mains[newest - 3].est_tokens:,} tok (estimated)" in caption
        await pilot.press("home")
        assert panel.cursor == 1
        await pilot.press("end")
        assert panel.cursor == newest and panel.selected is None  # following again


async def test_enter_on_a_demos_timeline_plays_the_scenario_again_to_that_request(
        make_app: Callable[..., CtxlabApp]) -> None:
    """A scripted demo can go back: every panel shows the chosen request, not only one."""
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        newest = app.calls
        panel = await open_timeline(pilot)
        await pilot.press("left", "left", "enter")
        for _ in range(100):
            await pilot.pause(0.1)
            if app.source is not None and app.source.running and app.paused and \
                    app.calls == newest - 2:
                break
        assert app.calls == newest - 2 and app.paused
        assert panel.requests.side("ctxlab")[-1].index == newest - 2


async def test_a_run_that_cannot_go_back_shows_the_request_in_the_model_view(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[ev.Event] = []
    monkeypatch.setattr(tui.app, "AgentSession", recording(events))
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        assert app.source is not None
        app.source.capabilities = app.source.capabilities - {Capability.SEEK}  # as live
        mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
        newest = len(mains)
        await open_timeline(pilot)
        await pilot.press("left", "left", "enter")
        await pilot.pause(0.2)
        shown = app.query_one(ModelView).messages
        assert shown == list(mains[newest - 3].sent or ())
        assert shown != list(mains[-1].sent or ())


def replay_app(tmp_path: Path, events: list[ev.Event], **config: Any) -> CtxlabApp:
    def make(workspace: Path) -> ReplaySource:
        source = ReplaySource(load_recording(COMPACTING),
                              ReplayOptions(workdir=workspace, limits=LimitMode.COURSE,
                                            hold_at_end=True))
        source.subscribe(events.append)
        return source

    settings: dict[str, Any] = dict(scenario=None, source=make, workspace=tmp_path / "w",
                                    theme="ctxlab-dark", speed=1000.0)
    settings.update(config)
    return CtxlabApp(AppConfig(**settings))


def original_tokens(events: list[ev.Event]) -> list[int | None]:
    return [e.original_tokens for e in events if isinstance(e, ev.ReplayStep)]


async def test_a_replays_timeline_draws_both_sides_and_enter_seeks_the_replay_there(
        tmp_path: Path) -> None:
    events: list[ev.Event] = []
    app = replay_app(tmp_path, events)
    async with app.run_test(size=(160, 48)) as pilot:
        await replayed(pilot)
        panel = await open_timeline(pilot)
        plot = await drawn(pilot, panel)
        steps = [e for e in events if isinstance(e, ev.ReplayStep)]
        assert len(steps) == 9 and all(s.original_tokens for s in steps)
        ours, original = lines_drawn(plot)  # the sides in SIDES order: ctxlab first
        # the triggers, before the sides: ctxlab's, then Claude Code's own (the lowest
        # context its automatic compactions reported), where the window view marks them
        triggers = [[int(v) for v in np.asarray(d.y)] for d in plot._datasets[-4:-2]]
        ctxlab_mark = trigger(panel.requests, "ctxlab", panel.limits)
        assert ctxlab_mark is not None
        assert triggers == [[ctxlab_mark.tokens] * 2, [190_048] * 2]
        assert original == original_tokens(events)
        alike = [sum(p.tokens for p in window.parts if p.per_call)
                 for i in range(1, 10) if (window := window_of(panel.requests, "original", i))]
        assert ours == [e.est_tokens + extra for e, extra in zip(
            [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"],
            alike, strict=True)]
        recorded = [e for e in events if isinstance(e, ev.Stage) and e.by == "claude-code"]
        assert [(m.index, m.stage) for m in panel.timeline.side("original").marks] == \
            [(4, "auto_compact"), (7, "manual_compact")] and len(recorded) == 2
        assert {4.0, 7.0} <= set(marks_drawn(plot))
        # select request 3 and press Enter: the replay goes back there, paused
        await pilot.press("home", "right", "right")
        assert panel.cursor == 3
        await pilot.press("enter")
        source = app.source
        assert source is not None
        await wait_for(pilot, lambda: source.position == 3 and not source.seeking)
        await pilot.pause(0.3)
        assert source.paused
        assert panel.timeline.requests == (1, 2, 3) and panel.cursor == 3
        assert "request 3/9" in app.query_one(ReplayPanel).text()
        # every panel now shows request 3: the meter has ctxlab's side of step 3
        assert app.query_one(ContextMeter).chars == steps[2].ctxlab_chars
        plot = await drawn(pilot, panel)
        assert lines_drawn(plot)[-1] == original_tokens(events)[:3]
        # the cursor can go to a request not replayed yet; Enter plays on to it
        await pilot.press(*["right"] * 6)
        assert panel.cursor == 9
        assert "not replayed yet" in str(panel.query_one("#timeline-caption").render())
        await pilot.press("enter")
        await wait_for(pilot, lambda: source.position == 9 and not source.seeking)


async def test_in_a_replay_the_meters_spark_line_says_it_is_ctxlabs_side_and_where_both_are(
        tmp_path: Path) -> None:
    app = replay_app(tmp_path, [])
    async with app.run_test(size=(200, 55)) as pilot:
        await replayed(pilot)
        await pilot.pause(0.2)
        spark = str(app.query_one("#meter-spark").render())
        assert f"both sides: Timeline, key {panels.keys()['timeline']}" in spark


async def test_the_watch_screens_timeline_follows_the_lists_selection(tmp_path: Path) -> None:
    app = canned_watch_app(tmp_path)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle_watch(pilot)  # the third request selected: the compacting one
        screen = app.screen
        timeline = screen.query_one(WatchTimeline)
        plot = timeline.query_one(TimelinePlot)
        views = screen.query_one("#watch-views", TabbedContent)
        assert views.active == "watch-changes-pane"  # the changes first; v shows the next
        await pilot.press("v")
        assert views.active == "watch-window-pane"
        await pilot.press("v")
        assert views.active == "watch-timeline-pane"
        await wait_for(pilot, lambda: plot.shown is not None and plot.shown.selected == 3)
        responses = [r for r in screen.responses.values()]
        requests = [screen.requests[i] for i in sorted(screen.requests)]
        assert lines_drawn(plot) == [[r.context_tokens for r in responses]]
        assert [q.est_tokens for q in requests] != lines_drawn(plot)[0]  # counted, not guessed
        marks = [(m.index, m.stage) for m in timeline.timeline.side("watched").marks]
        assert marks == [(3, "client_micro_compact")]
        assert 3.0 in marks_drawn(plot)
        caption = str(timeline.query_one("#watch-timeline-caption").render())
        assert f"#3  {responses[2].context_tokens:,} tok (counted)" in caption
        assert "client_micro_compact" in caption
        await pilot.press("up")
        await wait_for(pilot, lambda: plot.shown is not None and plot.shown.selected == 2)
        assert "#2" in str(timeline.query_one("#watch-timeline-caption").render())


async def test_a_playing_replay_redraws_the_plot_a_few_times_a_second_and_not_while_hidden(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty-odd requests at full speed: the caption follows every batch, the picture at
    most every REDRAW_PERIOD, and a hidden tab draws nothing until it is shown."""
    from bench.sessions import write_session
    from tui.widgets.timeline_plot import REDRAW_PERIOD

    session = write_session(tmp_path, 400_000)
    drawn_views: list[Any] = []
    draw = TimelinePlot.draw

    def counted(plot: TimelinePlot, view: Any) -> None:
        drawn_views.append(view)
        draw(plot, view)

    monkeypatch.setattr(TimelinePlot, "draw", counted)

    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(session),
                            ReplayOptions(workdir=workspace, hold_at_end=True))

    app = CtxlabApp(AppConfig(scenario=None, source=make, workspace=tmp_path / "w",
                              theme="ctxlab-dark", speed=1000.0))
    async with app.run_test(size=(160, 48)) as pilot:
        await replayed(pilot, timeout=60)
        await pilot.pause(REDRAW_PERIOD * 2)
        assert drawn_views == []  # History was shown the whole time
        panel = await open_timeline(pilot)
        plot = await drawn(pilot, panel)
        assert len(drawn_views) == 1 and len(panel.timeline.requests) > 50
        # from the start again, shown: far fewer pictures than requests, the last one whole
        loop = asyncio.get_running_loop()
        started = loop.time()
        app.source.seek(0)
        await wait_for(pilot, lambda: panel.timeline.requests == ())
        app.source.resume()
        await replayed(pilot, timeout=60)
        elapsed = loop.time() - started
        plot = await drawn(pilot, panel)
        pictures = len(drawn_views) - 1
        assert pictures <= elapsed / REDRAW_PERIOD + 3
        assert pictures < len(panel.timeline.requests)
        assert len(plot.shown.timeline.side("original").x) == len(panel.timeline.requests)


async def test_the_projector_draws_the_trigger_in_whole_cells_and_the_legend_names_it(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        panel = await open_timeline(pilot)
        plot = await drawn(pilot, panel)
        thin = next(d for d in plot._datasets if type(d).__name__ == "LinePlot")
        assert thin.hires_mode is not None  # a braille hairline on a screen
        app.theme = "projector"
        await pilot.pause(0.3)
        plot = await drawn(pilot, panel)
        heavy = next(d for d in plot._datasets if type(d).__name__ == "LinePlot")
        assert heavy.hires_mode is None  # whole cells on a projector
        series = panel.timeline.side("ctxlab")
        assert series is not None and series.threshold is not None
        legend = str(panel.query_one("#timeline-legend").render())
        assert f"━━ trigger {series.threshold:,}" in legend


async def test_the_timeline_is_built_only_while_its_tab_shows(
        make_app: Callable[..., CtxlabApp], monkeypatch: pytest.MonkeyPatch) -> None:
    import tui.widgets.timeline as timeline_module

    built: list[int] = []
    real = timeline_module.build

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(timeline_module, "build", counting)
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        assert built == []  # a whole run with the tab closed: nothing built
        panel = await open_timeline(pilot)
        await pilot.pause(0.2)
        assert built and panel.timeline.side("ctxlab") is not None
