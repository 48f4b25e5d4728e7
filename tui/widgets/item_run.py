"""A run of History items — tool calls and stage marks — drawn as lines of one widget.

A replay at top speed adds hundreds of tool calls and stage marks to the History at each
routing. As widgets of their own, each one was styled when mounted, laid out on every frame
and removed again once the History had too many: the History's share of a replay was most
of what the workbench added to the engine's time, and its frames the longest stalls. Here
the items between two other entries of the History (a request, an answer, a notice) are
records in one widget that draws only the lines on screen: adding items measures their
height, nothing more, and an item is rendered (its lines kept until it changes) only when
it comes into view.

Each item says what it shows (:meth:`HistoryItem.make`), how far it is indented and which
component style colours it; the run adds the cursor's and the pointer's backgrounds. A click
on a tool call's line opens or closes it; the link under an opened call's preview opens the
whole result (the item under the pointer is the one asked).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.css.styles import RenderStyles
from textual.errors import NoWidget
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions
from textual.widget import Widget

from tui.widgets.history_item import HistoryItem, height_of

MAX_ITEMS = 10_000  # items kept in a run: a long live session keeps the newest


def own_style(styles: RenderStyles) -> Style:
    """The colours a component's rules set (``Style.from_styles`` would also give the
    colours it does not set, the defaults, over the widget's own)."""
    return Style(styles.background if styles.has_rule("background") else None,
                 styles.color if styles.has_rule("color") else None)


def moved_by(starts: list[int], at: int, size: int) -> None:
    """Item ``at`` now takes ``size`` lines: the items after it move by the difference."""
    delta = starts[at] + size - starts[at + 1]
    if delta:
        starts[at + 1:] = [start + delta for start in starts[at + 1:]]


def moved_up(starts: list[int], count: int) -> list[int]:
    """Where things start once the first ``count`` are gone (as far as measured)."""
    if len(starts) <= count:
        return [0]
    first = starts[count]
    return [start - first for start in starts[count:]]


class Shifted:
    """A selection as one item sees it: the item's text starts at line ``first`` of the
    run's."""

    __slots__ = ("first", "selection")

    def __init__(self, selection: Selection, first: int) -> None:
        self.selection = selection
        self.first = first

    def get_span(self, y: int) -> tuple[int, int] | None:
        return self.selection.get_span(y + self.first)


def renumbered(strip: Strip, first: int) -> Strip:
    """The strip with the text lines its segments point to (their ``offset``, which a
    selection follows) moved down by ``first``."""
    if not first:
        return strip
    segments = []
    for text, style, control in strip:
        if style is not None and style._meta is not None:
            meta = style.meta
            offset = meta.get("offset")
            if offset is not None and offset[1] is not None:
                style = style + RichStyle.from_meta({"offset": (offset[0], offset[1] + first)})
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


class ItemRun(Widget):
    """Consecutive History items, oldest first; ``shown`` are those the search keeps."""

    DEFAULT_CSS = """
    ItemRun { height: auto; width: 1fr; }
    ItemRun > .item-run--tool { color: $text-muted; }
    ItemRun > .item-run--hover { background: $block-hover-background; }
    ItemRun > .item-run--cursor { background: $accent 25%; }
    ItemRun > .item-run--cursor-focus { background: $accent 40%; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "item-run--tool", "item-run--mark", "item-run--hover", "item-run--cursor",
        "item-run--cursor-focus"}

    def __init__(self, focused: Callable[[], bool] = lambda: False,
                 show: Callable[[HistoryItem], object] = lambda _item: None) -> None:
        super().__init__()
        self.focused = focused  # whether the History has the focus (the cursor is brighter)
        self.show = show  # scroll the History so an item (just opened by a click) is in view
        self.items: list[HistoryItem] = []
        self.shown: list[HistoryItem] = []
        self.keeps: Callable[[HistoryItem], bool] = lambda _item: True
        self.cursor: HistoryItem | None = None
        self.hover: HistoryItem | None = None
        self.pressed: HistoryItem | None = None  # under the pointer at the last press
        # per width measured (with and without a scrollbar beside): where each shown item
        # starts, as far as measured, and the total last
        self._tops: dict[int, list[int]] = {}
        self._starts: list[int] = [0]  # each shown item's first line of the run's text
        self._styles: dict[tuple[str, ...], Style] = {}
        self._link: RichStyle | None = None
        self._kept: dict[int, tuple[tuple[object, ...], list[Strip]]] = {}

    # -- the items -----------------------------------------------------------------------

    def add(self, items: Iterable[HistoryItem]) -> None:
        """New items after the others (the oldest past :data:`MAX_ITEMS` are dropped)."""
        new = list(items)
        for item in new:
            item.run = self
        self.items.extend(new)
        self.shown.extend(item for item in new if self.keeps(item))
        if len(self.items) > MAX_ITEMS:
            self._drop(len(self.items) - MAX_ITEMS)
        self.refresh(layout=True)

    def _drop(self, count: int) -> None:
        """The oldest ``count`` items go; where the others are is moved up, not measured
        again."""
        gone, self.items = self.items[:count], self.items[count:]
        for item in gone:
            item.run = None
            self._kept.pop(id(item), None)
        if self.cursor in gone:
            self.cursor = None
        shown = 0  # the shown items among those gone: the first ones shown
        while shown < len(self.shown) and self.shown[shown].run is None:
            shown += 1
        del self.shown[:shown]
        for width, tops in self._tops.items():
            self._tops[width] = moved_up(tops, shown)
        self._starts = moved_up(self._starts, shown)

    def narrow(self, keeps: Callable[[HistoryItem], bool]) -> int:
        """Show only the items ``keeps`` keeps; how many it keeps. The same items as
        before keep their measures (a History brought back, or the search cleared, asks
        every run again: a long run is not measured again for that)."""
        self.keeps = keeps
        shown = [item for item in self.items if keeps(item)]
        if len(shown) != len(self.shown) or \
                any(a is not b for a, b in zip(shown, self.shown, strict=True)):
            self.shown = shown
            self._tops.clear()
            del self._starts[1:]
            self.refresh(layout=True)
        return len(self.shown)

    def item_changed(self, item: HistoryItem) -> None:
        """An item shows something else: its lines do, and its height may change (the
        items after it then move by as much: they are not measured again). Most changes
        are to the newest items (a result arriving), so the item is looked for from the
        end."""
        shown = self.shown
        at = next((n for n in range(len(shown) - 1, -1, -1) if shown[n] is item), None)
        if at is not None:
            plain = item.plain()
            for width, tops in self._tops.items():
                if at + 1 < len(tops):
                    moved_by(tops, at, height_of(plain, max(1, width - item.INDENT)))
            if at + 1 < len(self._starts):
                moved_by(self._starts, at, plain.count("\n") + 1)
        self.refresh(layout=True)

    def set_cursor(self, item: HistoryItem | None) -> None:
        self.cursor = item
        self.refresh()

    # -- where the items are ---------------------------------------------------------------

    def _measure(self, width: int, most: int | None = None) -> list[int]:
        """Where each shown item starts at ``width``, and the total last (measuring only the
        items not measured at that width yet; at most ``most`` of them)."""
        tops = self._tops.get(width)
        if tops is None:
            if len(self._tops) > 3:  # widths of an earlier size of the screen
                self._tops.clear()
            tops = self._tops[width] = [0]
        end = None if most is None else len(tops) - 1 + most
        for item in self.shown[len(tops) - 1:end]:
            tops.append(tops[-1] + height_of(item.plain(), max(1, width - item.INDENT)))
        return tops

    def measure_some(self, most: int) -> bool:
        """Measure up to ``most`` new items at the widths the run was laid out at (before
        the frame that lays it out next, which then has only what is left); whether any are
        left."""
        left = False
        for width in list(self._tops):
            left |= len(self._measure(width, most)) - 1 < len(self.shown)
        return left

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._measure(width)[-1] if width > 0 else 0

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        """A run's size is what its parent's layout gave it, and nothing in it is laid out:
        a new size (the run grew) is drawn in the frame that laid it out, with no second
        layout (``Widget`` asks for one whenever a widget's virtual size changes, and a
        fast replay's History grows at every routing)."""
        return super()._size_updated(size, virtual_size, container_size, layout=False)

    def index_at(self, y: int) -> int | None:
        """The index in ``shown`` of the item on line ``y`` (None: no item there, or the run
        not laid out yet: nothing is measured at no width)."""
        width = self.content_size.width
        if width <= 0:
            return None
        tops = self._measure(width)
        at = bisect_right(tops, y) - 1
        return at if y >= 0 and at < len(self.shown) else None

    def top_of(self, at: int) -> int:
        """The first line of the ``at``-th shown item."""
        return self._measure(self.content_size.width)[at]

    def item_at(self, y: int) -> HistoryItem | None:
        at = self.index_at(y)
        return None if at is None else self.shown[at]

    def region_of(self, item: HistoryItem) -> Region | None:
        """The item's lines, in the run's own coordinates (None: not shown, or the run not
        laid out yet)."""
        width = self.content_size.width
        try:
            at = self.shown.index(item)
        except ValueError:
            return None
        if width <= 0:
            return None
        tops = self._measure(width)
        return Region(0, tops[at], self.size.width, tops[at + 1] - tops[at])

    # -- drawing -----------------------------------------------------------------------------

    def _style(self, *names: str) -> Style:
        style = self._styles.get(names)
        if style is None:
            style = self.visual_style
            for name in names:
                style += own_style(self.get_component_styles(name))
            self._styles[names] = style
        return style

    def _lines(self, at: int, width: int) -> list[Strip]:
        """The ``at``-th shown item's lines, kept until it, its place, the cursor or the
        pointer on it changes (a text selection is drawn afresh)."""
        item = self.shown[at]
        names = [item.COMPONENT]
        if item is self.cursor:
            names.append("item-run--cursor-focus" if self.focused() else "item-run--cursor")
        elif item is self.hover and item.HOVERS:
            names.append("item-run--hover")
        first = self.first_text_line(at)
        selection = self.text_selection
        key = (item.version, width, first, *names)
        kept = self._kept.get(id(item))
        if kept is not None and kept[0] == key and selection is None:
            return kept[1]
        strips = self._draw(item, width, first, self._style(*names), selection)
        if selection is None:
            self._kept[id(item)] = (key, strips)
        return strips

    def _draw(self, item: HistoryItem, width: int, first: int, style: Style,
              selection: Selection | None) -> list[Strip]:
        """What ``Visual.to_strips`` draws of the item's content, padded to the width,
        with its text lines numbered from ``first`` (the run's text is every item's, one
        after the other: that is what a selection picks from) and the selection on it."""
        inner = max(1, width - item.INDENT)
        pad = (style + Style(reverse=False)).rich_style
        lines = None if selection is not None else self._short_lines(item, inner, style, first)
        if lines is not None:
            strips = [line.extend_cell_length(inner, pad) for line in lines]
        else:
            picked = None if selection is None else Shifted(selection, first)
            picked_style = None if selection is None else Style.from_styles(
                self.screen.get_component_styles("screen--selection"))
            strips = item.content().render_strips(inner, None, style, RenderOptions(
                self._get_style, self.styles, picked, picked_style))  # type: ignore[arg-type]
            if self.auto_links and not self.screen._selecting:
                link = self._link_style()
                strips = [strip._apply_link_style(link) for strip in strips]
            strips = [renumbered(strip.extend_cell_length(inner, pad), first)
                      for strip in strips]
        if item.INDENT:
            margin = Strip.blank(item.INDENT, self.visual_style.rich_style)
            strips = [Strip.join([margin, strip]) for strip in strips]
        return strips

    def _short_lines(self, item: HistoryItem, width: int, style: Style,
                     first: int) -> list[Strip] | None:
        """An item whose every line fits and holds no tab or link, drawn as ``Content``
        draws it (its segments pointing to its lines in the run's text, from ``first``)
        without the wrapping and the links it does not need; None for any other item. Most
        items of a History are such: a call's line, a stage's two."""
        plain = item.plain()
        if "\t" in plain or any(cell_len(line) > width for line in plain.split("\n")):
            return None
        content = item.content()
        lines = content.split("\n", allow_blank=True) if "\n" in plain else [content]
        strips = []
        get_style = self._get_style
        for y, line in enumerate(lines, first):
            segments = []
            x = 0
            for text, text_style in line.render(style, end="", parse_style=get_style):
                rich = (style + text_style).rich_style_with_offset(x, y)
                if rich._meta is not None and "@click" in rich.meta:
                    return None  # a link: styled as links are
                segments.append(Segment(text, rich))
                x += len(text)
            strips.append(Strip(segments, line.cell_length))
        return strips

    def _link_style(self) -> RichStyle:
        """The style of a link (worked out once per change of the styles)."""
        if self._link is None:
            self._link = self.link_style
        return self._link

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        at = self.index_at(y)
        if at is None:
            return Strip.blank(width, self.visual_style.rich_style)
        lines = self._lines(at, width)
        line = y - self.top_of(at)
        return lines[line] if line < len(lines) else Strip.blank(width)

    # -- the run's text: what a selection picks from -----------------------------------------

    def first_text_line(self, at: int) -> int:
        """The first text line of the ``at``-th shown item: the lines of its text before it
        (as written, not as wrapped), counted only as far as needed."""
        starts = self._starts
        for item in self.shown[len(starts) - 1:at]:
            starts.append(starts[-1] + item.plain().count("\n") + 1)
        return starts[at]

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(item.plain() for item in self.shown)), "\n"

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._kept.clear()
        self._link = None

    # -- the pointer -------------------------------------------------------------------------

    def _repaint(self, *items: HistoryItem | None) -> None:
        regions = [r for r in (self.region_of(i) for i in items if i is not None) if r]
        if regions:
            self.refresh(*regions)

    def _hover(self, item: HistoryItem | None) -> None:
        if item is not self.hover:
            old, self.hover = self.hover, item
            self._repaint(old, item)
            self.styles.pointer = "pointer" if item is not None and item.HOVERS else "default"

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._hover(self.item_at(event.y))

    def on_leave(self, event: events.Leave) -> None:
        self._hover(None)

    def pointer_moved(self) -> None:
        """The History scrolled under a pointer that did not move: the item under it now
        (Textual sends no move for that)."""
        try:
            under, _ = self.screen.get_widget_at(*self.app.mouse_position)
        except NoWidget:
            under = None
        y = self.app.mouse_position.y - self.content_region.y
        self._hover(self.item_at(y) if under is self else None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self.pressed = self.item_at(event.y)

    def on_click(self, event: events.Click) -> None:
        at = self.index_at(event.y)
        if at is None:
            return
        item = self.shown[at]
        if item.on_click(event.y - self.top_of(at), self.content_size.width - item.INDENT):
            event.stop()
            self.show(item)

    def action_open_result(self) -> None:
        """The link under an opened tool call's preview (``[@click=open_result]``)."""
        opener = getattr(self.pressed, "open_result", None)
        if opener is not None:
            opener()
