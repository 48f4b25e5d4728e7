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
from textual.widgets import Static, TabbedContent, TabPane

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
    CSS = """#fill { width: 20; height: auto; } #row { height: auto; } #auto { width: auto; }
    .share { width: 1fr; } #sized { width: auto; height: auto; }"""

    def compose(self) -> ComposeResult:
        with Vertical(id="fill"):
            yield Counted("four", id="line")
            yield Counted("a share", id="share", classes="share")
        with Horizontal(id="row"):
            yield Counted("four\nfive", id="auto")
            with Vertical(id="sized"):
                yield Counted("a share", id="inner", classes="share")
        with TabbedContent(id="tabs"):
            with TabPane("one", id="one"):
                yield Counted("one line", id="in-tab")
                yield Static("below", id="below")
            with TabPane("two", id="two"):
                yield Static("other")


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


async def test_a_share_of_a_set_width_is_not_chosen_by_the_content() -> None:
    """``1fr`` in a column of set width: a longer line on as many lines lays nothing out;
    in a container sized by its content, a layout is asked for (the content may choose)."""
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        share, inner = app.query_one("#share", Counted), app.query_one("#inner", Counted)
        await pilot.pause()
        share.layouts = inner.layouts = 0
        update_in_place(share, Content("a longer share"))
        await pilot.pause()
        assert share.layouts == 0 and share.size.width == 20
        update_in_place(inner, Content("a longer share"))
        await pilot.pause()
        assert inner.layouts  # the container measures its content: asked for


async def test_in_a_closed_tab_or_not_mounted_it_is_sized_when_shown_or_mounted() -> None:
    """Updated while its tab is closed, a widget has its new height when the tab opens, and
    what is under it moves down (the tab's containers keep the sizes of the last layout)."""
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        tabs = app.query_one(TabbedContent)
        in_tab = app.query_one("#in-tab", Counted)
        await pilot.pause()
        tabs.active = "two"
        await pilot.pause()
        update_in_place(in_tab, Content("one\ntwo\nthree\nfour"))
        await pilot.pause()
        tabs.active = "one"
        await pilot.pause(0.1)
        assert in_tab.size.height == 4
        assert app.query_one("#below").region.y == in_tab.region.y + 4
        later = Counted("")
        update_in_place(later, Content("one\ntwo"))
        assert later.layouts == 0
        await app.query_one("#fill").mount(later)
        await pilot.pause()
        assert later.size.height == 2
