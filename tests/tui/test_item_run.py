"""A run of History items (tui/widgets/item_run.py): each item's lines where its place
says, measured from its text exactly as drawn, redrawn when it changes; the oldest dropped
past the limit without measuring the rest again; the run's text selectable."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Offset, Size
from textual.pilot import Pilot
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import RenderOptions, Visual

from core.events import Stage, ToolCall
from tests.tui.conftest import run_of, wait_for
from tui import routing
from tui.nav_search import parse
from tui.widgets import item_run
from tui.widgets.conversation import Conversation
from tui.widgets.history_item import height_of
from tui.widgets.item_run import ItemRun, renumbered
from tui.widgets.stage_mark import StageMark
from tui.widgets.tool_block import ToolBlock

pytestmark = pytest.mark.anyio
RESULT = "line\n" * 30


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="view")


async def test_items_are_drawn_where_they_are_and_redrawn_when_they_change() -> None:
    """Each item's lines in order (a call indented, a mark not), the height of the run their
    sum; a result arriving, a call opened, the pointer and the cursor redraw the call."""
    app = Host()
    async with app.run_test(size=(80, 30)) as pilot:
        calls = [ToolBlock(f"t{n}", "read_file", {"path": f"f{n}.py"}, lambda _id: RESULT)
                 for n in range(3)]
        stage = Stage(stage="snip_compact", before_chars=9_000, after_chars=4_000,
                      before_messages=9, after_messages=5)
        mark = StageMark(stage)
        run = await run_of(app, calls[0], mark, calls[1], calls[2])
        await wait_for(pilot, lambda: run.size.height == 4)
        lines = [run.render_line(y).text for y in range(4)]
        assert lines[0].startswith("  ▶ ⚙ read_file") and "running" in lines[0]
        assert lines[1].startswith("▌ snip_compact")
        calls[1].set_result(120, False)
        calls[1].collapsed = False
        await wait_for(pilot, lambda: run.size.height == 4 + len(calls[1].body().split("\n")))
        assert run.item_at(2) is calls[1] and run.region_of(calls[2]).y == run.size.height - 1
        assert "120 chars" in run.render_line(2).text
        plain = run.render_line(0)
        await pilot.hover(run, offset=(4, 0))
        await pilot.pause()
        assert run.hover is calls[0] and run.render_line(0) != plain
        run.set_cursor(mark)
        await pilot.pause()
        assert run.render_line(1).text == lines[1]
        assert run.render_line(1) != drawn_without_cursor(run, mark)


def drawn_without_cursor(run: ItemRun, mark: StageMark) -> Strip:
    region = run.region_of(mark)
    assert region is not None
    run.cursor = None
    try:
        return run.render_line(region.y)
    finally:
        run.cursor = mark


@pytest.mark.parametrize("width", [1, 2, 5, 9, 17, 40])
@pytest.mark.parametrize("text", [
    "", "one line", "a line that is longer than the narrow widths by far",
    "two\nlines", "  why: 16,655 chars still > trigger 12,000 after micro_compact: results",
    "字符很宽的一行文字，还有命令", "averyveryverylongwordwithnobreaks and more", "trailing   ",
    "▶ ⚙ read_file {\"path\": \"a/very/long/path/to/some/file.py\"}  →  1,234 chars",
    "tab\tin it", "\n\nblank lines\n"])
async def test_an_items_height_is_the_lines_it_is_drawn_in(text: str, width: int) -> None:
    """Items are measured from their text alone (most are never drawn): exactly as many
    lines as drawing them gives."""
    app = Host()
    async with app.run_test(size=(60, 10)):
        run = ItemRun()
        await app.query_one("#view").mount(run)
        drawn = Visual.to_strips(run, Content(text), width, None, run.visual_style)
        assert height_of(text, width) == len(drawn)


async def test_the_runs_text_can_be_selected_and_copied() -> None:
    """The pointer's place is a place in the run's text (every item's, one after the other),
    the selection is drawn there, and copying gives that text."""
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        calls = [ToolBlock(f"t{n}", "read_file", {"path": f"f{n}.py"}, lambda _id: RESULT)
                 for n in range(3)]
        run = await run_of(app, *calls)
        await pilot.pause()
        x, y = run.region.offset
        widget, offset = app.screen.get_widget_and_offset_at(x + 2 + 4, y + 2)
        assert widget is run and offset == Offset(4, 2)  # the third call's line, 2 cells in
        plain = run.render_line(1)
        app.screen.selections = {run: Selection(Offset(2, 1), Offset(11, 2))}
        await pilot.pause()
        assert app.screen.get_selected_text() == \
            calls[1].plain()[2:] + "\n" + calls[2].plain()[:11]
        assert run.render_line(1).text == plain.text and run.render_line(1) != plain
        app.screen.selections = {}
        await pilot.pause()
        assert run.render_line(1) == plain


async def test_the_oldest_items_go_past_the_limit_and_the_rest_keep_their_places(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(item_run, "MAX_ITEMS", 5)
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        calls = [ToolBlock(f"t{n}", "read_file", {"path": f"f{n}.py"}, lambda _id: RESULT)
                 for n in range(4)]
        run = await run_of(app, *calls)
        calls[3].set_result(len(RESULT), False)
        calls[3].collapsed = False  # a taller item, measured where it is
        await wait_for(pilot, lambda: run.size.height > 4)  # the layout follows in its time
        tall = run.size.height
        more = [ToolBlock(f"u{n}", "bash", {"command": f"ls {n}"}, lambda _id: RESULT)
                for n in range(3)]
        run.add(more)
        assert run.items == run.shown == calls[2:] + more
        assert all(call.run is None for call in calls[:2])
        await wait_for(pilot, lambda: run.size.height == tall - 2 + 3)
        assert run.item_at(run.size.height - 1) is more[-1]
        assert "ls 2" in run.render_line(run.size.height - 1).text


async def test_an_item_of_short_lines_is_drawn_as_content_draws_it() -> None:
    """The short way for an item whose lines fit gives the very segments ``Content`` gives,
    down to where each points in the run's text."""
    app = Host()
    async with app.run_test(size=(80, 20)):
        stage = Stage(stage="micro_compact", before_chars=9_000, after_chars=4_000,
                      before_messages=9, after_messages=5, files=["a.txt"])
        items: list[ToolBlock | StageMark] = [
            StageMark(stage), StageMark(stage, lambda: "9,000 chars > trigger 8,000"),
            ToolBlock("t1", "bash", {"command": "ls -la"}, lambda _id: "x\ny")]
        run = await run_of(app, *items)
        items[2].set_result(12, True)  # a styled title
        for item in items:
            style = run._style(item.COMPONENT)
            short = run._short_lines(item, 100, style, 7)
            drawn = item.content().render_strips(100, None, style,
                                                 RenderOptions(run._get_style, run.styles))
            assert short is not None and len(short) == len(drawn)
            assert [list(s) for s in short] == [list(renumbered(d, 7)) for d in drawn]
        assert run._short_lines(items[0], 20, run._style("item-run--mark"), 0) is None
        items[2].collapsed = False  # a link under the preview: drawn the long way
        assert run._short_lines(items[2], 100, run._style("item-run--tool"), 0) is None


class HistoryHost(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation(lambda _id: RESULT)


async def history_of(pilot: Pilot[None], calls: int, mark_at: int = -1) -> Conversation:
    """A History given ``calls`` tool calls (a stage mark in place of call ``mark_at``)."""
    history = pilot.app.query_one(Conversation)
    for n in range(calls):
        if n == mark_at:
            await history.stage(Stage(stage="snip_compact", before_chars=9_000,
                                      after_chars=4_000, before_messages=9,
                                      after_messages=5))
        else:
            await history.tool_call(ToolCall(id=f"t{n}", name="read_file",
                                             input={"path": f"f{n}.py"}))
    await history.flush()
    await pilot.pause()
    return history


async def test_the_pointer_follows_a_scroll_and_shows_a_hand_over_a_call() -> None:
    """Scrolled under a pointer that did not move, the item under it is the one lit; a
    call (which takes clicks) shows a hand, a stage mark does not."""
    app = HistoryHost()
    async with app.run_test(size=(60, 10)) as pilot:
        history = await history_of(pilot, 30, mark_at=12)
        history.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        run = history.runs()[0]
        items = run.items
        await pilot.hover(run, offset=(4, 2))
        await pilot.pause()
        assert run.hover is items[2] and run.styles.pointer == "pointer"
        history.scroll_to(y=10, animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        assert run.hover is items[12] and run.styles.pointer == "default"


async def test_a_click_that_opens_a_call_shows_it_whole() -> None:
    """As Enter does: the call opened on the last line in view is scrolled into view."""
    app = HistoryHost()
    async with app.run_test(size=(60, 10)) as pilot:
        history = await history_of(pilot, 30)
        history.release_anchor()
        history.scroll_to(y=10, animate=False, immediate=True)
        await pilot.pause()
        run = history.runs()[0]
        bottom = history.scroll_y + history.scrollable_content_region.height - 1
        block = run.item_at(bottom)  # the call on the last line in view
        assert isinstance(block, ToolBlock)
        await pilot.click(run, offset=(4, bottom))
        await pilot.pause()
        await pilot.pause()
        assert not block.collapsed
        region = run.region_of(block)
        assert region is not None and region.height > history.scrollable_content_region.height
        assert history.scroll_y == region.y  # taller than the view: from its first line


async def test_a_search_shows_a_new_match_in_a_run_it_had_hidden() -> None:
    app = HistoryHost()
    async with app.run_test(size=(60, 10)) as pilot:
        history = await history_of(pilot, 3)
        assert history.narrow(parse("tool:bash")) == 0
        await history.tool_call(ToolCall(id="b1", name="bash", input={"command": "ls"}))
        await history.flush()
        await pilot.pause()
        assert [item.tool_name for item in history.items()] == ["bash"]  # type: ignore
        assert history.runs()[0].display


async def test_a_run_replaced_while_it_is_measured_is_left_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new run (or a seek back) may reset the History while a routing's items are being
    measured between turns of the loop: the measuring stops, nothing fails."""
    monkeypatch.setattr(routing, "SLICE", -1.0)  # a turn of the loop after every step
    app = HistoryHost()
    async with app.run_test(size=(60, 10)) as pilot:
        history = await history_of(pilot, 3)
        for n in range(500):
            await history.tool_call(ToolCall(id=f"u{n}", name="bash", input={"n": n}))
        flushing = asyncio.ensure_future(history.flush())
        await asyncio.sleep(0)
        await history.reset()
        await flushing
        await pilot.pause()
        assert history.items() == []


async def test_a_run_not_laid_out_yet_measures_nothing() -> None:
    """Asked where an item is before the run has a width (the pointer, a selection made
    before the first layout), it says nowhere, and no width of nothing is kept to measure
    every new item at."""
    app = Host()
    async with app.run_test(size=(60, 10)):
        run = ItemRun()
        call = ToolBlock("t1", "bash", {"command": "ls"}, lambda _id: RESULT)
        run.add([call])
        assert run.item_at(0) is None and run.region_of(call) is None
        assert run.get_content_height(Size(0, 0), Size(0, 0), 0) == 0
        assert run._tops == {} and not run.measure_some(10)
