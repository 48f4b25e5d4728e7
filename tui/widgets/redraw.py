"""Skipping a redraw that would draw what is already on screen, and a layout that would
lay out what already fits.

``Static.update`` always asks for a layout of the whole screen, because new content may
change the widget's size, and a layout re-arranges and re-renders every panel whose region
it touches. Many updates in a run change nothing: the spark line of a meter between two
calls, a status line the same event count wrote again. :func:`update_if_changed` compares
the new content with the last one shown (text *and* styles: ``Content`` equality compares
only the text) and leaves the widget alone when they match.

Most of the others change the text and not the size: a meter's figures, a status line, a
tool call's result size. :func:`update_in_place` skips the layout when the widget is shown
and its new content measures the same (the widest line, where the content chooses the
width; the lines it wraps to at the widget's width): a replay's every routing redrew
these, and each asked for a layout of the whole screen.
"""

from __future__ import annotations

from typing import Any, cast

from textual.content import Content
from textual.css.styles import RulesMap
from textual.visual import Visual, VisualType
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
    update_in_place(widget, content)
    return True


def update_in_place(widget: Static, content: VisualType) -> None:
    """``widget.update(content)``, asking for a layout only if the widget's size can change.

    A widget not mounted is measured when it is mounted. One mounted and not shown (its tab
    closed) is laid out as ``update`` would: showing it again reuses the sizes the last
    layout gave it and its containers. A shown one keeps its size when the new content is
    as wide (where its width follows its content) and wraps to as many lines at its width."""
    before = widget.visual if widget.is_mounted else None
    widget.update(content, layout=False)
    if before is None:
        return
    if not shown(widget) or not same_size(widget, before, widget.visual):
        widget.refresh(layout=True)


def same_size(widget: Widget, before: Visual, after: Visual) -> bool:
    """Whether ``after`` gives ``widget`` the size ``before`` gave it: the measures Textual
    sizes a widget from (the content's optimal width, unless the content cannot choose the
    width; its height at the content width)."""
    if not isinstance(before, Content) or not isinstance(after, Content):
        return False  # a renderable: measured by rendering it, not worth guessing
    width = widget.content_size.width
    if width <= 0:
        return False
    rules = cast("RulesMap", widget.styles)  # what Textual itself measures with
    return ((width_is_set(widget) or before.get_optimal_width(rules, width)
             == after.get_optimal_width(rules, width))
            and before.get_height(rules, width) == after.get_height(rules, width))


def width_is_set(widget: Widget) -> bool:
    """Whether the widget's content cannot choose its width: none given (it fills its
    container), a width in cells, or a share (``1fr``, a percentage) of a container whose
    width is set in turn. Inside a container sized by its content (``width: auto``) a share
    is measured from the content too."""
    node: Any = widget
    while isinstance(node, Widget):
        scalar = node.styles.width
        if scalar is None:
            return True
        if scalar.is_auto:
            return False
        if not (scalar.is_fraction or scalar.is_percent):
            return True
        node = node.parent
    return True  # the screen's size


def shown(widget: Widget) -> bool:
    """Whether the widget is displayed: itself and every container up to the screen (a tab
    not open hides its pane, not the widgets in it). A view that is not shown need not
    draw: it draws when it is shown again."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))
