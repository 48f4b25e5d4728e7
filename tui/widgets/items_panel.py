"""The "Items" tab: the largest items of the request shown, and one key to read each whole.

Category totals say what kind of content fills the context; this says which piece (see
:mod:`core.views.items`): a row per item or group of repeats, largest first, with its size
in chars and tokens, how many copies, its age in requests, the tool and what it was given,
and the stage or agent that wrote it. Enter (or ``o``) opens the item's whole content in the
viewer. A replay has two sides — the recorded agent's requests and ctxlab's — and ``x``
switches between them; the header names the side and the request's figures as its
``model_request`` stated them.

The table is filled only while the tab is shown (and when it is shown again): finding the
items reads the whole list, which a replay running at full speed need not do per request.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from core.views.items import Item, largest
from tui.i18n import localize_bindings, t
from tui.messages import OpenText
from tui.widgets.columns import cut
from tui.widgets.render import short_size
from tui.widgets.side_panel import SWITCH_SIDE, SidePanel, side_label

LABEL_CELLS = 56
SHOWN = 30  # items listed: the long tail is what category totals already cover
# The item itself (its kind, the tool and what it was given) right after its figures, so
# a narrow tab still shows it; who wrote it last.
COLUMNS = ("size", "tokens", "copies", "age", "what", "by")


def item_what(item: Item) -> str:
    """What a reader knows the item by: the tool and its input, else a preview."""
    if item.tool:
        return f"{item.tool} {item.target}".strip()
    return " ".join(item.content[:400].split())[:80]


def item_label(item: Item) -> str:
    """The item's kind, then what it is: ``file read · Read a.py`` (cut to leave the
    writer's column in view; the viewer has it whole)."""
    return cut(f"{t(f'items.kind_{item.kind}')} · {item_what(item)}", LABEL_CELLS)


class ItemsTable(DataTable[str]):
    """The rows of :func:`core.views.items.largest`; Enter or ``o`` opens one whole."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open_item", "key.open_item"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        localize_bindings(self)
        self.items: list[Item] = []

    def on_mount(self) -> None:
        if not self.columns:
            self.show(self.items)

    def show(self, items: list[Item]) -> None:
        self.items = items
        if not self.columns:
            for key in COLUMNS:
                self.add_column(t(f"items.col_{key}"), key=key)
        self.clear()
        for n, item in enumerate(items):
            self.add_row(short_size(item.total_chars), f"{item.tokens:,}",
                         f"×{item.count}" if item.count > 1 else "",
                         "" if item.age is None else str(item.age),
                         item_label(item), item.touched,
                         key=str(n))

    def action_open_item(self) -> None:
        if not self.items or self.cursor_row >= len(self.items):
            return
        item = self.items[self.cursor_row]
        self.post_message(OpenText(t("items.title", kind=t(f"items.kind_{item.kind}"),
                                     what=item_what(item)[:60], index=item.message),
                                   item.content))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_item()


class ItemsPanel(SidePanel, Vertical):
    """The header line and the items of the shown request of the side chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [*SWITCH_SIDE]
    DEFAULT_CSS = """
    ItemsPanel #items-head { height: auto; padding: 0 1; color: $text-muted; }
    ItemsPanel ItemsTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.follow_sides()

    def compose(self) -> ComposeResult:
        yield Static(t("items.empty"), id="items-head", markup=False)
        yield ItemsTable(id="items-table")

    def draw(self) -> None:
        side = self.shown_side()
        table = self.query_one(ItemsTable)
        head = self.query_one("#items-head", Static)
        if side is None or side.cur is None:
            head.update(t("items.empty"))
            table.show([])
            return
        sent = side.cur
        head.update(t("items.head", side=side_label(self.side), n=side.number,
                      messages=sent.messages, chars=sent.chars, others=self.others()))
        table.show(largest(sent.sent or (), SHOWN, chars_per_token=self.sides.chars_per_token,
                           ages=side.ages))
