"""Skipping a redraw that would draw what is already on screen.

``Static.update`` always asks for a layout of the whole screen, because new content may
change the widget's size, and a layout re-arranges and re-renders every panel whose region
it touches. Many updates in a run change nothing: the spark line of a meter between two
calls, a status line the same event count wrote again. :func:`update_if_changed` compares
the new content with the last one shown (text *and* styles: ``Content`` equality compares
only the text) and leaves the widget alone when they match.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

_SHOWN = "_ctxlab_shown"


def _key(content: Any) -> Any:
    if isinstance(content, Content):
        return ("content", content.plain, tuple(content.spans))
    if isinstance(content, str):
        return ("str", content)
    return ("object", id(content))  # a renderable: never assumed equal to another


def update_if_changed(widget: Static, content: Content | str) -> bool:
    """``widget.update(content)`` unless it already shows exactly that; True if it drew."""
    key = _key(content)
    if getattr(widget, _SHOWN, None) == key:
        return False
    setattr(widget, _SHOWN, key)
    widget.update(content)
    return True


def shown(widget: Widget) -> bool:
    """Whether the widget is displayed: itself and every container up to the screen (a tab
    not open hides its pane, not the widgets in it). A view that is not shown need not
    draw: it draws when it is shown again."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))
