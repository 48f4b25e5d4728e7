"""The largest items of one watched request, in a table over the watch screen.

The watch screen's detail names the few largest items; this lists them all (as the Items
tab does for ctxlab's own requests and a replay), and Enter or ``o`` opens one whole in the
viewer. Escape returns to the watch.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from core.views.items import Item
from tui.i18n import localize_bindings
from tui.widgets.items_panel import ItemsTable
from tui.widgets.keys_footer import KeysFooter


class ItemsScreen(ModalScreen[None]):
    """A title line and the items' table."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "key.close")]
    DEFAULT_CSS = """
    ItemsScreen { align: center middle; }
    ItemsScreen #items-box { width: 95%; height: 90%; border: round $primary;
                             background: $surface; }
    ItemsScreen #items-note { height: auto; padding: 0 1; color: $text-muted; }
    ItemsScreen ItemsTable { height: 1fr; }
    """

    def __init__(self, title: str, note: str, items: list[Item]) -> None:
        super().__init__()
        localize_bindings(self)
        self.title_text, self.note, self.items = title, note, items

    def compose(self) -> ComposeResult:
        with Vertical(id="items-box") as box:
            box.border_title = self.title_text
            yield Static(self.note, id="items-note", markup=False)
            yield ItemsTable(id="items-table")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(ItemsTable)
        table.show(self.items)
        table.focus()
