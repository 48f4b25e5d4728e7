"""The inspector at small terminals: it opens on the change, its title wraps, and a message it
shows only the first lines of (a summary) is read whole with Enter."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static, TextArea

from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.i18n import t
from tui.screens.inspector import DiffRow, Inspector
from tui.screens.viewer import Viewer
from tui.widgets.readable import readable_message
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio

SIZES = [(80, 24), (100, 30)]


async def open_inspector(app: CtxlabApp, pilot: object, stage: str) -> Inspector:
    timeline = app.query_one(StageTimeline)
    record = next(r for r in timeline.stages if r.event.stage == stage)
    timeline.focus()
    timeline.move_cursor(row=record.index - 1)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await pilot.pause(0.3)  # type: ignore[attr-defined]
    screen = app.screen
    assert isinstance(screen, Inspector) and screen.record is record
    return screen


def in_view(lst: VerticalScroll, row: DiffRow) -> bool:
    """The row's first line is inside the part of the list on screen."""
    top = row.virtual_region.y
    return lst.scroll_y <= top < lst.scroll_y + lst.scrollable_content_region.height


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("stage", ["snip_compact", "manual_compact"])
async def test_inspector_opens_on_the_change_with_its_whole_title(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int], stage: str) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        screen = await open_inspector(app, pilot, stage)
        for side in ("#before-list", "#after-list"):
            lst = screen.query_one(side, VerticalScroll)
            first = next(r for r in lst.query(DiffRow) if r.row.kind != "kept")
            assert in_view(lst, first), (side, lst.scroll_y, first.virtual_region)
        title = screen.query_one("#inspector-title", Static)
        position = t("inspector.position", n=screen.position() + 1, total=len(screen.records))
        lines = [line.text for line in title.render_lines(title.region.reset_offset)]
        assert position in " ".join(s.strip() for s in lines)  # nothing cut at the edge


@pytest.mark.parametrize("size", SIZES)
async def test_enter_on_a_summary_reads_it_whole(make_app: Callable[..., CtxlabApp],
                                                 size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        screen = await open_inspector(app, pilot, "manual_compact")
        await pilot.press("tab")  # from the ledger, the first Tab reaches a message
        assert isinstance(app.focused, DiffRow)
        summary = next(r for r in screen.query_one("#after-list").query(DiffRow)
                       if r.row.kind == "added")
        summary.focus()
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Viewer)
        assert app.screen.query_one(TextArea).text == readable_message(summary.row.message)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen is screen


@pytest.mark.parametrize("size", SIZES)
async def test_the_first_tab_reaches_the_change_and_keeps_it_in_view(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    """Tab from the ledger went to a side's first row — an unchanged message, often — and
    focusing it scrolled the list back to the top: the change the inspector had opened on
    went out of view again, and Enter read a message nobody asked about."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        screen = await open_inspector(app, pilot, "snip_compact")
        before = screen.query_one("#before-list", VerticalScroll)
        first = next(r for r in before.query(DiffRow) if r.row.kind != "kept")
        assert first is not before.query(DiffRow).first()  # a change below the first row
        await pilot.press("tab")
        await pilot.pause(0.2)
        assert app.focused is first
        assert in_view(before, first), (before.scroll_y, first.virtual_region)
