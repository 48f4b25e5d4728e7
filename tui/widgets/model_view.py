"""What the model sees: the message list of the last model call, drawn message by message.

The conversation tab shows what happened; this one shows the list the model was actually
sent — after snips, pointers, previews and summaries (the list and its sizes as the last
main ``model_request`` carried them). Putting the two side by side
is how a learner understands compaction, so special texts (placeholders, persisted previews,
archive markers, summaries) are coloured and labelled (see :mod:`tui.widgets.render`).
The list is redrawn only when it changed, compared by message identity (the engine replaces
a message rather than editing it), and Enter opens the selected message whole in the viewer.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import ListItem, ListView, Static

from tui.i18n import t
from tui.messages import OpenText
from tui.routing import Routed, RunInfo
from tui.widgets.readable import readable_message
from tui.widgets.render import message_content, size_label, text_kind


class ModelView(Routed, ListView):
    """One item per message of the agent's current history."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: list[dict[str, Any]] = []
        self._ids: list[int] = []
        self.sizes: tuple[int, ...] = ()
        self.total = 0

    async def reset(self, run: RunInfo | None = None) -> None:
        await self.show([])

    async def show(self, messages: list[dict[str, Any]], sizes: tuple[int, ...] = (),
                   total: int = 0) -> None:
        """Draw ``messages``, each with its size and the list's ``total`` as the event
        stated them (no size is measured here)."""
        ids = [id(m) for m in messages]
        if ids == self._ids:
            return
        self.messages, self._ids = list(messages), ids
        self.sizes, self.total = sizes, total
        await self.clear()
        items = [self._item(i, m) for i, m in enumerate(self.messages)]
        items.append(ListItem(Static(self._footer(), classes="model-footer")))
        await self.extend(items)
        if self.messages and self.index is None:  # Enter works without an arrow first
            self.index = 0

    def _item(self, index: int, message: dict[str, Any]) -> ListItem:
        shape = text_kind(message.get("content"), message)
        classes = f"model-msg -{shape}" if shape != "text" else "model-msg"
        chars = self.sizes[index] if index < len(self.sizes) else None
        return ListItem(Static(message_content(index, message, chars=chars)), classes=classes)

    def _footer(self) -> Content:
        if not self.messages:
            return Content.styled(t("model.empty"), "dim")
        return Content.styled(t("model.footer", n=len(self.messages),
                                size=size_label(self.total)), "dim italic")

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        index = self.index
        if index is None or index >= len(self.messages):
            return
        message = self.messages[index]
        self.post_message(OpenText(t("model.message_title", index=index,
                                     role=message.get("role")), readable_message(message)))
