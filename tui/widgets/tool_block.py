"""One tool call and its result in the conversation, collapsed by default.

Tool results are the bulk of an agent's context and can be megabytes, so the block shows
only the call and the result's size until it is opened; even then it shows the first lines
and offers the viewer for the rest. The result text is not in the ``tool_result`` event
(only its size is), so it is looked up on demand in the agent's full history — the one list
the engine never compacts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.content import Content
from textual.widgets import Button, Collapsible, Static

from tui.i18n import t
from tui.messages import OpenText
from tui.widgets.readable import content_text
from tui.widgets.render import as_text, head_lines, size_label

Lookup = Callable[[str], Any]
PREVIEW_LINES = 12


class ToolBlock(Collapsible):
    """``⚙ name input`` → ``… result size``; expands to a preview and an Open button."""

    def __init__(self, tool_use_id: str, name: str, data: dict[str, Any],
                 lookup: Lookup) -> None:
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.args = json.dumps(data, ensure_ascii=False)
        self.lookup = lookup
        self.result_label = t("tool.running")
        # One child until opened: a conversation holds hundreds of these, and every widget
        # costs layout time on each frame.
        super().__init__(
            Static(t("tool.pending"), classes="tool-body"),
            title=self._make_title(), collapsed=True, classes="tool-block",
        )

    def _make_title(self) -> str:
        args = self.args if len(self.args) <= 60 else self.args[:59] + "…"
        return f"⚙ {self.tool_name} {args}  →  {self.result_label}"

    def set_result(self, chars: int, is_error: bool) -> None:
        self.result_label = (t("tool.error_prefix") if is_error else "") + size_label(chars)
        self.title = self._make_title()
        if is_error:
            self.add_class("-error")

    async def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is not self:
            return
        content = self.lookup(self.tool_use_id)
        if content is None:
            return
        if not self.query(".tool-open"):
            await self.query_one(Collapsible.Contents).mount(
                Button(t("tool.open"), classes="tool-open", compact=True))
        text = as_text(content)
        lines = text.count("\n") + 1
        body = Content.assemble((t("tool.size_lines", size=size_label(len(text)), lines=lines),
                                 "bold"), t("tool.first_lines"), "\n",
                                (head_lines(text, PREVIEW_LINES, 100), "dim"))
        self.query_one(".tool-body", Static).update(body)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.open_result()

    def open_result(self) -> None:
        """The whole result in the viewer (the button, or ``r`` on the selected call)."""
        content = self.lookup(self.tool_use_id)
        if content is None:
            self.app.notify(t("tool.not_yet"))
            return
        self.post_message(OpenText(t("tool.result_title", name=self.tool_name,
                                     id=self.tool_use_id),
                                   content_text(content)))
