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

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from core import events as ev
from core.events import Event
from core.views.items import Item, largest
from core.views.sides import Side, Sides
from tui.i18n import localize_bindings, t
from tui.messages import OpenText
from tui.routing import Routed, RunInfo, handles
from tui.widgets.columns import cut
from tui.widgets.render import short_size

LABEL_CELLS = 56
SHOWN = 30
# The events the requests' fold reads (core.views.requests): the requests, their answers'
# figures, a replay's steps and ratio, and where a run starts again.
FOLDED = (ev.ModelRequest, ev.ModelResponse, ev.ReplayStep, ev.ReplayStart, ev.RunStart,
          ev.Stage)  # items listed: the long tail is what category totals already cover
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


def side_label(name: str) -> str:
    return t(f"items.side_{name}")


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


class ItemsPanel(Routed, Vertical):
    """The header line and the items of the shown request of the side chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "switch_side", "key.switch_side")]
    DEFAULT_CSS = """
    ItemsPanel #items-head { height: auto; padding: 0 1; color: $text-muted; }
    ItemsPanel ItemsTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.sides = Sides()
        self.side = ""  # the side shown; "" until a request came
        self._stale = False

    def compose(self) -> ComposeResult:
        yield Static(t("items.empty"), id="items-head", markup=False)
        yield ItemsTable(id="items-table")

    def reset(self, run: RunInfo | None = None) -> None:
        self.sides, self.side = Sides(), ""
        self._stale = True
        self.redraw_once(self.redraw)

    @handles(*FOLDED)
    def follow(self, event: Event) -> None:
        known = len(self.sides.names())
        name = self.sides.see(event)
        if name is None:
            return
        if len(self.sides.names()) != known:  # a second side: ``x`` now switches
            self.refresh_bindings()
        self.side = self.side or name
        self._stale = True
        self.redraw_once(self.redraw)

    def on_show(self, event: events.Show) -> None:
        self.redraw()

    def shown_side(self) -> Side | None:
        return self.sides.get(self.side)

    def redraw(self) -> None:
        if not self._stale or not self.is_mounted or not self._on_screen():
            return
        self._stale = False
        side = self.shown_side()
        table = self.query_one(ItemsTable)
        head = self.query_one("#items-head", Static)
        if side is None or side.cur is None:
            head.update(t("items.empty"))
            table.show([])
            return
        sent = side.cur
        head.update(t("items.head", side=side_label(self.side), n=side.number,
                      messages=sent.messages, chars=sent.chars,
                      others=self._others()))
        table.show(largest(sent.sent or (), SHOWN, chars_per_token=self.sides.chars_per_token,
                           ages=side.ages))

    def _others(self) -> str:
        others = [n for n in self.sides.names() if n != self.side]
        return t("items.switch", side=side_label(others[0])) if others else ""

    def _on_screen(self) -> bool:
        return all(node.display for node in self.ancestors_with_self
                   if hasattr(node, "display"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_side":  # only a replay has two sides
            return len(self.sides.names()) > 1
        return True

    def action_switch_side(self) -> None:
        names = self.sides.names()
        if len(names) < 2:
            return
        self.side = names[(names.index(self.side) + 1) % len(names)]
        self._stale = True
        self.redraw()
