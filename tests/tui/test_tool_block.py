"""One tool call in the History (tui/widgets/tool_block.py), drawn by a run of items
(tui/widgets/item_run.py): a click anywhere on the call's line opens and closes it, even
wrapped on a narrow screen; the link under the preview opens the viewer; an error colours
the call's line only."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from tests.tui.conftest import run_of
from tui.messages import OpenText
from tui.widgets.tool_block import ToolBlock

pytestmark = pytest.mark.anyio
RESULT = "line\n" * 30


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[OpenText] = []

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="view")

    def on_open_text(self, message: OpenText) -> None:
        self.opened.append(message)


async def test_a_click_on_a_wrapped_calls_line_toggles_and_the_link_opens_the_viewer() -> None:
    app = Host()
    async with app.run_test(size=(50, 30)) as pilot:
        block = ToolBlock("t1", "read_file", {"path": "a/very/long/path/to/some/file.py"},
                          lambda _id: RESULT)
        run = await run_of(app, block)
        block.set_result(len(RESULT), False)
        await pilot.pause()
        assert run.size.height > 1  # the call's line wraps at this width
        await pilot.click(run, offset=(4, run.size.height - 1))  # its last line
        await pilot.pause()
        assert not block.collapsed
        lines = str(block.content()).splitlines()
        link = next(n for n, line in enumerate(lines) if line.strip() == "Open in viewer")
        wrapped = len(block.content().split("\n")[0].wrap(run.content_size.width - 2)) - 1
        await pilot.click(run, offset=(6, link + wrapped))  # below the wrapped call line
        await pilot.pause()
        assert not block.collapsed and len(app.opened) == 1  # the link, not a toggle
        assert app.opened[0].text == RESULT
        await pilot.click(run, offset=(4, 0))
        await pilot.pause()
        assert block.collapsed


async def test_an_error_colours_the_calls_line_not_its_preview() -> None:
    app = Host()
    async with app.run_test(size=(80, 30)) as pilot:
        block = ToolBlock("t1", "bash", {"command": "false"}, lambda _id: RESULT)
        await run_of(app, block)
        block.set_result(12, True)
        block.collapsed = False
        await pilot.pause()
        rendered = block.content()
        title, _, body = str(rendered).partition("\n")
        assert "error" in title and body
        spans = [span for span in rendered.spans if "error" in str(span.style)]
        assert spans and all(span.end <= len(title) for span in spans)
