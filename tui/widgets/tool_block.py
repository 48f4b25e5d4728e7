"""One tool call and its result in the conversation, collapsed by default.

Tool results are the bulk of an agent's context and can be megabytes, so the block shows
only the call and the result's size until it is opened; even then it shows the first lines
and a link to the viewer for the rest. The result text is not in the ``tool_result`` event
(only its size is), so it is looked up on demand in the agent's full history — the one list
the engine never compacts.

A History holds hundreds of these and a fast replay adds dozens a frame, so a block is one
widget drawing its own lines (a ``Collapsible`` is four: each styled on mount, each laid
out on every frame): the title line toggles it on a click, Enter toggles it from the
History, and the link (or ``r``) opens the whole result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui.i18n import t
from tui.messages import OpenText
from tui.widgets.readable import content_text
from tui.widgets.redraw import update_in_place
from tui.widgets.render import as_text, head_lines, size_label

Lookup = Callable[[str], Any]
PREVIEW_LINES = 12
INDENT = "  "


class ToolBlock(Static):
    """``▶ ⚙ name input → result size``; opened, a preview and a link to the viewer."""

    collapsed: reactive[bool] = reactive(True, init=False)

    def __init__(self, tool_use_id: str, name: str, data: dict[str, Any],
                 lookup: Lookup) -> None:
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.args = json.dumps(data, ensure_ascii=False)
        self.lookup = lookup
        self.result_label = t("tool.running")
        self.failed = False  # the tool reported an error: the call's line in that colour
        super().__init__(self._title(collapsed=True), classes="tool-block")

    def _title(self, collapsed: bool) -> Content:
        args = self.args if len(self.args) <= 60 else self.args[:59] + "…"
        symbol = "▶" if collapsed else "▼"
        line = f"{symbol} ⚙ {self.tool_name} {args}  →  {self.result_label}"
        return Content.styled(line, "$error") if self.failed else Content(line)

    def body(self) -> Content:
        """The opened block's lines under the title: the result's size and first lines and
        the link to the viewer, or that the result is still to come."""
        content = self.lookup(self.tool_use_id)
        if content is None:
            return Content(INDENT + t("tool.pending"))
        text = as_text(content)
        lines = text.count("\n") + 1
        preview = "\n".join(INDENT + line
                            for line in head_lines(text, PREVIEW_LINES, 100).split("\n"))
        link = Content.from_markup("[@click=open_result]$label[/]", label=t("tool.open"))
        return Content.assemble(
            INDENT, (t("tool.size_lines", size=size_label(len(text)), lines=lines), "bold"),
            t("tool.first_lines"), "\n", (preview, "dim"), "\n", INDENT, link)

    def redraw(self) -> None:
        title = self._title(self.collapsed)
        update_in_place(self, title if self.collapsed
                        else Content.assemble(title, "\n", self.body()))

    def set_result(self, chars: int, is_error: bool) -> None:
        self.result_label = (t("tool.error_prefix") if is_error else "") + size_label(chars)
        self.failed = is_error
        self.redraw()

    def watch_collapsed(self) -> None:
        self.redraw()
        if self.is_mounted:
            self.call_after_refresh(self.scroll_visible)

    def on_click(self, event: events.Click) -> None:
        """A click on the call's line (wrapped on a narrow screen) opens or closes the
        block; the link under the preview opens the viewer (its own action)."""
        width = self.content_size.width
        title = self._title(self.collapsed)
        if event.y < (len(title.wrap(width)) if width > 0 else 1):
            event.stop()
            self.collapsed = not self.collapsed

    def action_open_result(self) -> None:
        self.open_result()

    def open_result(self) -> None:
        """The whole result in the viewer (the link, or ``r`` on the selected call)."""
        content = self.lookup(self.tool_use_id)
        if content is None:
            self.app.notify(t("tool.not_yet"))
            return
        self.post_message(OpenText(t("tool.result_title", name=self.tool_name,
                                     id=self.tool_use_id),
                                   content_text(content)))
