"""``update_in_place`` (tui/widgets/redraw.py) asks for a layout of the screen only when
the new content can change the widget's size, and the widget always ends the size its
content needs: shown, hidden and then shown, not yet mounted, or sized by its content."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from tui.widgets.redraw import update_in_place

pytestmark = pytest.mark.anyio


class Counted(Static):
    """A Static that remembers the layouts it asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.layouts = 0

    def refresh(self, *args: Any, **kwargs: Any) -> Widget:
        if kwargs.get("layout"):
            self.layouts += 1
        return super().refresh(*args, **kwargs)


class Host(App[None]):
    CSS = "#fill { width: 20; } #row { height: auto; } #auto { width: auto; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="fill"):
            yield Counted("four", id="line")
        with Horizontal(id="row"):
            yield Counted("four\nfive", id="auto")


async def test_a_layout_only_when_the_size_can_change() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        line = app.query_one("#line", Counted)
        await pilot.pause()
        line.layouts = 0
        update_in_place(line, Content("five"))  # as wide as the column allows: one line
        await pilot.pause()
        assert line.layouts == 0 and line.size.height == 1
        update_in_place(line, Content("a line long enough to wrap in twenty cells"))
        await pilot.pause()
        assert line.layouts and line.size.height == 3
        assert "wrap" in "".join(s.text for s in line.render_lines(line.region.reset_offset))


async def test_a_widget_sized_by_its_content_is_laid_out_when_it_widens() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        auto = app.query_one("#auto", Counted)
        await pilot.pause()
        assert auto.size.width == 4
        auto.layouts = 0
        update_in_place(auto, Content("nine\nten"))  # as wide, as tall: nothing to lay out
        await pilot.pause()
        assert auto.layouts == 0
        update_in_place(auto, Content("eightchr"))  # two lines at four cells, yet wider
        await pilot.pause()
        assert auto.layouts and auto.size.width == 8


async def test_hidden_or_unmounted_it_is_sized_when_shown_or_mounted() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        line = app.query_one("#line", Counted)
        app.query_one("#fill").display = False
        await pilot.pause()
        line.layouts = 0
        update_in_place(line, Content("one\ntwo\nthree"))
        assert line.layouts == 0  # not shown: laid out when it is
        app.query_one("#fill").display = True
        await pilot.pause()
        assert line.size.height == 3
        later = Counted("")
        update_in_place(later, Content("one\ntwo"))
        assert later.layouts == 0
        await app.query_one("#fill").mount(later)
        await pilot.pause()
        assert later.size.height == 2
