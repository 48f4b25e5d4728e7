"""Whether one History item matches a search (:mod:`tui.nav_search`): what the item says,
and for a tool call the result's content, looked up once and kept (a result can be large,
and a query is matched again at every key typed)."""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui.nav_search import Query
from tui.widgets.history_item import HistoryItem
from tui.widgets.render import as_text
from tui.widgets.stage_mark import StageMark
from tui.widgets.tool_block import ToolBlock


def result_text(block: ToolBlock) -> str:
    """The call's result as text ("" until it is known), read once per block."""
    cached: str | None = getattr(block, "_search_text", None)
    if cached is not None:
        return cached
    content = block.lookup(block.tool_use_id)
    if content is None:
        return ""
    text = as_text(content)
    block._search_text = text  # type: ignore[attr-defined]
    return text


def item_matches(widget: Widget | HistoryItem, query: Query) -> bool:
    """One entry or item of the History against ``query`` (an empty query matches
    everything)."""
    if query.empty:
        return True
    if isinstance(widget, ToolBlock):
        return query.tool(widget.tool_name) or \
            query.text(widget.tool_name, widget.args, result_text(widget))
    if isinstance(widget, StageMark):
        return query.stage(widget.event.stage) or query.text(widget.plain())
    if isinstance(widget, Markdown):
        return query.text(widget.source)
    if isinstance(widget, Static):
        return query.text(str(widget.render()))
    return False
