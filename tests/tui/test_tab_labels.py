"""Every tab beside History is named on screen where the row allows it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Tab, TabbedContent

from tui import panels
from tui.app import CtxlabApp
from tui.i18n import t

pytestmark = pytest.mark.anyio


def tabs_in_view(app: CtxlabApp) -> list[str]:
    row = app.query_one("#tabs", TabbedContent).region
    return [str(tab.label) for tab in app.query(Tab)
            if tab.region.x >= row.x and tab.region.right <= row.right]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_100_columns_every_tab_is_named_the_long_ones_short(
        lang: str, make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(lang=lang)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        names = [p.name for p in panels.placed("tab")]
        assert len(tabs_in_view(app)) == len(names)  # before: Items and Diff cut off
        assert t("panel.model_short") in tabs_in_view(app)


async def test_wide_the_tabs_keep_their_full_names(make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        assert tabs_in_view(app) == [t(f"panel.{p.name}") for p in panels.placed("tab")]
        await pilot.resize_terminal(100, 30)
        await pilot.pause(0.3)
        assert "Model" in tabs_in_view(app)
