"""One tool call and its result in the conversation, collapsed by default.

Tool results are the bulk of an agent's context and can be megabytes, so the block shows
only the call and the result's size until it is opened; even then it shows the first lines
and a link to the viewer for the rest. The result text is not in the ``tool_result`` event
(only its size is), so it is looked up on demand in the agent's full history — the one list
the engine never compacts.

A History holds thousands of these and a fast replay adds hundreds at a time, so a block is
not a widget but lines of an :class:`~tui.widgets.item_run.ItemRun`: a click on the call's
line toggles it, Enter toggles it from the History, and the link (or ``r``) opens the whole
result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.content import Content

from tui.i18n import t
from tui.messages import OpenText
from tui.widgets.history_item import HistoryItem, height_of
from tui.widgets.readable import content_text
from tui.widgets.render import as_text, head_lines, size_label

Lookup = Callable[[str], Any]
PREVIEW_LINES = 12
INDENT = "  "


class ToolBlock(HistoryItem):
    """``▶ ⚙ name input → result size``; opened, a preview and a link to the viewer."""

    INDENT = 2
    COMPONENT = "item-run--tool"
    HOVERS = True

    def __init__(self, tool_use_id: str, name: str, data: dict[str, Any],
                 lookup: Lookup) -> None:
        super().__init__()
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.data = data
        self._args: str | None = None
        self.lookup = lookup
        self.result_label = t("tool.running")
        self.failed = False  # the tool reported an error: the call's line in that colour
        self._collapsed = True

    @property
    def args(self) -> str:
        """The call's input as JSON (written when first shown or searched: an input can be a
        whole file, and most calls of a fast replay are never shown)."""
        if self._args is None:
            self._args = json.dumps(self.data, ensure_ascii=False)
        return self._args

    @property
    def collapsed(self) -> bool:
        return self._collapsed

    @collapsed.setter
    def collapsed(self, value: bool) -> None:
        if value != self._collapsed:
            self._collapsed = value
            self.changed()

    def _title_text(self, collapsed: bool) -> str:
        args = self.args if len(self.args) <= 60 else self.args[:59] + "…"
        symbol = "▶" if collapsed else "▼"
        return f"{symbol} ⚙ {self.tool_name} {args}  →  {self.result_label}"

    def _title(self, collapsed: bool) -> Content:
        line = self._title_text(collapsed)
        return Content.styled(line, "$error") if self.failed else Content(line)

    def plain(self) -> str:
        """The closed call's line is measured as text (most calls are never drawn)."""
        return self._title_text(True) if self.collapsed else super().plain()

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

    def make(self) -> Content:
        title = self._title(self.collapsed)
        return title if self.collapsed else Content.assemble(title, "\n", self.body())

    def set_result(self, chars: int, is_error: bool) -> None:
        self.result_label = (t("tool.error_prefix") if is_error else "") + size_label(chars)
        self.failed = is_error
        self.changed()

    def on_click(self, y: int, width: int) -> bool:
        """A click on the call's line (wrapped on a narrow screen) opens or closes the
        block; the link under the preview opens the viewer (the run's action)."""
        if y < height_of(self._title_text(self.collapsed), max(1, width)):
            self.collapsed = not self.collapsed
            return True
        return False

    def open_result(self) -> None:
        """The whole result in the viewer (the link, or ``r`` on the selected call)."""
        run = self.run
        if run is None:
            return
        content = self.lookup(self.tool_use_id)
        if content is None:
            run.app.notify(t("tool.not_yet"))
            return
        run.post_message(OpenText(t("tool.result_title", name=self.tool_name,
                                    id=self.tool_use_id),
                                  content_text(content)))
