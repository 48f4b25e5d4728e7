"""Notices never cover the right column's panels, at any terminal size; auto-pause notices
replace each other instead of stacking."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.app import App
from textual.geometry import Region
from textual.widgets._toast import Toast

from core.events import Stage
from tests.tui.conftest import wait_for
from tests.tui.sizes import SIZES
from tui import panels
from tui.app import CtxlabApp
from tui.i18n import t
from tui.screens.watch import WatchScreen
from tui.themes import VARIABLE_DEFAULTS

pytestmark = pytest.mark.anyio


def right_column(app: CtxlabApp) -> dict[str, Region]:
    """The screen regions of the right column's panels that are shown."""
    regions = {}
    for panel in panels.in_strip():
        widget = app.panel_widget(panel.name)
        if widget.display and widget.region.area:
            regions[panel.name] = widget.region
    return regions


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_auto_pause_notices_never_cover_the_right_column(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    app = make_app(auto_pause=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        for _ in range(3):  # a run's first three auto-pauses, each notice left standing
            await wait_for(pilot, lambda: app.paused or app.finished)
            await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
            await pilot.pause(0.2)
            if app.finished:
                break
            app.source.resume()
        await pilot.pause(0.2)
        toasts = [toast.region for toast in app.screen.query(Toast)]
        assert toasts
        meter = app.query_one("#context").region
        assert meter.area and not any(toast.overlaps(meter) for toast in toasts)
        for name, region in right_column(app).items():
            assert not any(toast.overlaps(region) for toast in toasts), name


async def test_a_notice_keeps_a_readable_width_when_the_keys_panel_squeezes_history(
        make_app: Callable[..., CtxlabApp]) -> None:
    """At 80 columns the keys panel (``?``) leaves History a few columns: a notice there
    was a column of word pieces three cells wide."""
    from tui.notices import MIN_WIDTH

    app = make_app(auto_pause=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.paused)
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        assert app.query_one("#tabs > ContentSwitcher").region.width < MIN_WIDTH
        app.notify("Paused: micro_compact fired for the first time", timeout=30)
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.3)
        assert all(toast.region.width >= MIN_WIDTH - 2 for toast in app.screen.query(Toast))


async def test_a_new_auto_pause_notice_replaces_the_last(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(auto_pause=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for _ in range(3):
            await wait_for(pilot, lambda: app.paused)
            await pilot.pause(0.2)
            app.source.resume()
        await wait_for(pilot, lambda: app.paused or app.finished)
        await pilot.pause(0.3)
        titles = [str(toast.render()).splitlines()[0] for toast in app.screen.query(Toast)]
        assert len(titles) == 1 and "fired for the first time" in titles[0]


async def test_stages_of_one_pause_share_its_notice_and_the_next_pause_replaces_it(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(142, 34), notifications=True) as pilot:
        def titles() -> list[str]:
            return [str(toast.render()).splitlines()[0] for toast in app.screen.query(Toast)]

        async def pause_at(calls: int, *names: str) -> None:
            for name in names:
                app.announce_pause(Stage(stage=name, before_chars=28_775, after_chars=14_000,
                                         before_messages=53, after_messages=40), calls)
            await wait_for(pilot, lambda: any(names[-1] in title for title in titles()))
            await pilot.pause(0.1)

        await pause_at(4, "micro_compact", "fit_tool_results")  # one model call's stages
        assert titles() == [t("notice.auto_paused_title",
                              stage="micro_compact, fit_tool_results")]
        await pause_at(7, "snip_compact")
        assert titles() == [t("notice.auto_paused_title", stage="snip_compact")]


class Watching(App[None]):
    """The watch screen alone, as ``ctxlab watch`` pushes it over the workbench."""

    CSS_PATH = CtxlabApp.CSS_PATH

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def on_mount(self) -> None:
        self.push_screen(WatchScreen())


@pytest.mark.parametrize("size", [(80, 24), (142, 34), (200, 55)])
async def test_watch_notices_stay_over_the_list_of_requests(size: tuple[int, int]) -> None:
    app = Watching()
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause(0.2)
        app.notify("that body is no longer kept (the recording has it)")
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.1)
        toast = app.screen.query_one(Toast).region
        requests = app.screen.query_one("#watch-requests").region
        assert requests.x <= toast.x and toast.right <= requests.right
        assert not toast.overlaps(app.screen.query_one("#watch-side").region)
