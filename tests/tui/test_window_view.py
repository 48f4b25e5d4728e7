"""The Window tab (key 7) and the watch screen's window: the figures drawn are the events'
own, for a demo run, a replay (both sides, the original above ctxlab's) and a watched
client; ``show(side, index)`` moves it to another request."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TabbedContent

import tui.app_paced
from core import events as ev
from core.sources.replay import load_recording
from core.sources.replay.limits import LimitMode
from core.sources.replay.source import ReplayOptions, ReplaySource
from core.views.requests import fold
from core.views.window import Window, window_of
from tests.core.sources.replay.conftest import CLAUDE
from tests.tui.conftest import play_to_end, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.cli.watch_scene import SIZE, canned_watch_app, settle_watch
from tui.panels import keys
from tui.screens.watch import WatchScreen
from tui.widgets.window_view import WindowView

pytestmark = pytest.mark.anyio


@pytest.fixture
def routed(monkeypatch: pytest.MonkeyPatch) -> list[ev.Event]:
    """Every event the app routes to its panels, in order."""
    seen: list[ev.Event] = []
    route = tui.app_paced.route_batch

    async def recording(targets: Any, events: Any, *args: Any) -> None:
        events = list(events)
        seen.extend(events)
        await route(targets, events, *args)

    monkeypatch.setattr(tui.app_paced, "route_batch", recording)
    return seen


def text_of(view: WindowView) -> str:
    return str(view.query_one("#window-body").render())


def drawn(view: WindowView, window: Window) -> None:
    """The tab states the window's own figures."""
    text = text_of(view)
    assert f"request {window.index}" in text
    assert f"window {window.window_tokens:,} tokens" in text
    for part in window.parts:
        assert f"{part.tokens:,}" in text
    assert f"{window.tokens:,}" in text and f"{window.free_tokens:,}" in text


def test_the_window_tab_has_key_7() -> None:
    assert keys()["window"] == "7"


async def test_a_demo_runs_window_is_its_last_main_request(make_app, routed):
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("7")
        assert app.query_one(TabbedContent).active == "tab-window"
        await play_to_end(pilot)
        view = app.query_one(WindowView)
        mains = [e for e in routed if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
        [window] = view.windows()
        assert window == window_of(fold(routed), "ctxlab", limits=app.limits())
        assert (window.index, window.tokens) == (len(mains), mains[-1].est_tokens)
        assert {p.category: p.chars for p in window.parts} == \
            {k: v for k, v in mains[-1].breakdown.items() if v}
        assert sum(p.tokens for p in window.parts) == window.tokens
        assert {m.chars for m in window.marks} == {app.limits().context_limit,
                                                   app.limits().target}
        drawn(view, window)
        view.show("ctxlab", 1)
        [first] = view.windows()
        assert first.index == 1 and first.tokens == mains[0].est_tokens
        drawn(view, first)
        view.show()  # back to following the latest
        assert view.windows()[0].index == len(mains)


async def test_a_closed_window_tab_folds_and_draws_only_when_opened(make_app, routed):
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)  # the History shown: the Window tab stays closed
        view = app.query_one(WindowView)
        before = text_of(view)
        assert view._requests._waiting, "a closed tab only keeps the events"
        await pilot.press("7")
        await pilot.pause()
        [window] = view.windows()
        assert window == window_of(fold(routed), "ctxlab", limits=app.limits())
        assert text_of(view) != before
        drawn(view, window)


async def test_a_tab_opened_late_folds_its_many_events_in_slices_then_draws(
        make_app, routed, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past FOLD_AT_ONCE events waiting (a long replay's), opening the Window or the
    Timeline tab folds them a slice at a time, giving the loop its turns, then draws."""
    import tui.routing
    from tui.widgets.timeline import TimelinePanel

    monkeypatch.setattr(tui.routing, "FOLD_AT_ONCE", 0)
    monkeypatch.setattr(tui.routing, "FOLD_SLICE", 3)
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        view, panel = app.query_one(WindowView), app.query_one(TimelinePanel)
        assert view._requests.waiting > 3 and panel._requests.waiting > 3
        await pilot.press("7")
        await wait_for(pilot, lambda: view._requests.waiting == 0 and "request" in
                       text_of(view))
        [window] = view.windows()
        assert window == window_of(fold(routed), "ctxlab", limits=app.limits())
        drawn(view, window)
        await pilot.press(keys()["timeline"])
        await wait_for(pilot, lambda: panel._requests.waiting == 0 and
                       len(panel.timeline.requests) == len(fold(routed).side("ctxlab")))


async def test_a_replay_draws_the_original_above_ctxlabs(tmp_path: Path, routed):
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=workspace,
                                                                  limits=LimitMode.WINDOW))

    app = CtxlabApp(AppConfig(scenario=None, source=make, workspace=tmp_path / "work",
                              theme="ctxlab-dark", speed=1000.0))
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.press("7")
        await play_to_end(pilot)
        view = app.query_one(WindowView)
        theirs, ours = view.windows()
        steps = [e for e in routed if isinstance(e, ev.ReplayStep)]
        assert (theirs.side, ours.side) == ("original", "ctxlab")
        assert theirs.index == ours.index == steps[-1].index
        assert theirs.tokens == steps[-1].original_tokens and theirs.counted
        [auto] = theirs.marks
        assert (auto.kind, auto.tokens, auto.source) == ("auto_compact", 170_251, "recorded")
        text = text_of(view)
        assert text.index("original · request") < text.index("ctxlab · request")
        assert "170,251" in text and "auto-compacted at (recorded)" in text
        drawn(view, theirs)
        drawn(view, ours)


async def test_the_watch_screen_shows_the_selected_requests_window(tmp_path: Path, routed):
    app = canned_watch_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle_watch(pilot)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        view = screen.query_one(WindowView)
        chosen = screen.selected_id()
        assert chosen == 3
        [window] = view.windows()
        response = next(e for e in routed if isinstance(e, ev.WatchResponse) and e.id == 3)
        request = next(e for e in routed if isinstance(e, ev.WatchRequest) and e.id == 3)
        assert (window.side, window.index) == ("watched", 3)
        assert window.tokens == response.context_tokens and window.counted
        assert {p.category: p.chars for p in window.parts} == \
            {k: v for k, v in request.breakdown.items() if v}
        screen.query_one("#watch-views", TabbedContent).active = "watch-window-pane"
        await pilot.pause()  # a closed tab draws when it is opened
        drawn(view, window)
        await pilot.press("up")
        await wait_for(pilot, lambda: view.windows()[0].index == 2)


async def test_thresholds_changed_live_move_ctxlabs_marks(make_app):
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("s")
        await wait_for(pilot, lambda: app.calls == 1)
        await pilot.press("l")
        await pilot.pause(0.1)
        app.screen.query_one("#limit-context_limit", Input).value = "5000"
        await pilot.press("ctrl+s")
        await pilot.pause(0.1)
        assert app.limits().context_limit == 5000
        [window] = app.query_one(WindowView).windows()
        assert {m.kind: m.chars for m in window.marks} == {"trigger": 5000, "target": 4000}


async def test_the_projector_theme_draws_the_windows_marks_heavy_and_named(
        make_app: Callable[..., CtxlabApp]) -> None:
    """The back of a room cannot tell ▲ from △: the projector names each mark."""
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        await pilot.press(keys()["window"])
        app.theme = "projector"
        await pilot.pause(0.2)
        text = str(app.query_one("#window-body", Static).render())
        window = window_of(app.query_one(WindowView).requests, "ctxlab",
                           limits=app.query_one(WindowView).limits)
        assert window is not None
        trigger = next(m for m in window.marks if m.kind == "trigger")
        target = next(m for m in window.marks if m.kind == "target")
        assert f"trigger {trigger.tokens:,}" in text and f"target {target.tokens:,}" in text
        assert "┃" in text and "╏" in text and "▲" not in text
        app.theme = "ctxlab-dark"
        await pilot.pause(0.2)
        text = str(app.query_one("#window-body", Static).render())
        assert "▲" in text and f"trigger {trigger.tokens:,}" not in text


async def test_a_seek_back_keeps_what_the_replay_is(tmp_path: Path) -> None:
    """A rewind does not say the run's model or window again: the tab keeps them."""
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=workspace,
                                                                  limits=LimitMode.WINDOW))

    app = CtxlabApp(AppConfig(scenario=None, source=make, workspace=tmp_path / "work",
                              theme="ctxlab-dark", speed=1000.0, paused=True))
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.press("7")
        for _ in range(4):
            await pilot.press("s")
        await wait_for(pilot, lambda: app.source is not None and app.source.position == 4)
        await pilot.pause(0.3)
        view = app.query_one(WindowView)
        before = view.windows()[0]
        await pilot.press("S")
        await wait_for(pilot, lambda: app.source is not None and not app.source.seeking
                       and app.source.position == before.index - 1)
        await pilot.pause(0.3)
        after = view.windows()[0]
        assert after.index < before.index
        assert (after.model, after.window_tokens, after.window_source) == \
            (before.model, before.window_tokens, before.window_source)
        assert after.model and after.model != "?"
