"""The "Memory" panel: the records in ``.memory/``, live, with what the agent did with them.

Memory is the part of an agent users trust least because they cannot see it. The panel shows
every record with a type badge and its description, flags files that are not valid records
with the reason (they are never touched), marks the records recalled for the current request,
lists candidates the extractor rejected and why, and picks up hand edits from disk within a
fraction of a second with a visible "reloaded" notice.

The panel shows the session's one store; the session's watcher reports hand edits as
``index_rebuilt`` events with trigger ``watch`` on the event stream. ctxlab's own writes
(the agent's, the editor's) rebuild the index as they happen and never come back as
``watch``, so no time window is needed to tell them apart.

The table takes the rows the panel has — every record when they fit, the selected one's
detail and the notes scrolling in what is left — and its columns follow the panel's width
(see :mod:`tui.widgets.columns`): names whole when there is room, then the description.

Editing goes through the store, never around it: the built-in editor validates the document
first and writes atomically; ``$EDITOR`` edits the file itself and the watcher reports it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey

from core import events as ev
from core.memory import INDEX_NAME, MemoryStore, MemoryStoreError
from tui.i18n import localize_bindings, t
from tui.routing import Routed, RunInfo, handles
from tui.widgets.columns import cut, room, set_widths
from tui.widgets.memory_rows import CatalogRow, column_widths, name_cell

DEBOUNCE_SECONDS = 0.1
TYPE_STYLE = {
    "user": "bold $background on $primary",
    "feedback": "bold $background on $accent",
    "project": "bold $background on $success",
    "reference": "bold $background on $secondary",
}
BELOW_MIN = 3  # lines kept under the table: the detail's rule and two lines of it


class MemoryCatalog(Routed, Vertical):
    """Records table plus a line of rejected candidates; owns the memory actions.

    Record types (``user``, ``feedback``…) are the store's format values and stay as they
    are in every language: they are what one types into a record's frontmatter.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "key.mem_edit", show=False),
        Binding("a", "new", "key.mem_new"),
        Binding("e", "external", "key.mem_external"),
        Binding("d", "delete", "key.mem_delete"),
        Binding("m", "index", "key.mem_index"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        localize_bindings(self)
        self.border_title = t("panel.memory")
        self.store: MemoryStore | None = None
        self.recalled: set[str] = set()
        self.rejected: list[tuple[str, str]] = []
        self._changed: set[str] = set()
        self.rows: list[CatalogRow] = []
        self._shape: tuple[int, int, int, int] | None = None  # what the rows were cut for

    def compose(self) -> ComposeResult:
        table: DataTable[Content | str] = DataTable(id="memory-table", cursor_type="row")
        yield table
        with VerticalScroll(id="memory-below") as below:
            below.can_focus = False  # the panel's one Tab stop stays its table
            yield Static(id="memory-detail")
            yield Static(id="memory-notes")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(t("mem.col.type"), key="type", width=11)
        table.add_column(t("mem.col.name"), key="name", width=22)

    def on_resize(self, event: events.Resize) -> None:
        self.fill_table()

    # -- the events it draws ------------------------------------------------------------------

    @handles(ev.MemorySelected)
    def show_recalled(self, event: ev.MemorySelected) -> None:
        self.selected(event.files)

    @handles(ev.MemoryRejected)
    def show_rejected(self, event: ev.MemoryRejected) -> None:
        self.rejected_candidate(event.name, event.reason)

    @handles(ev.IndexRebuilt)
    def show_index_rebuilt(self, event: ev.IndexRebuilt) -> None:
        if event.trigger == "watch":  # a hand edit; ctxlab's own writes are never "watch"
            self.hand_changed(event.changed)
        else:
            self.refresh_catalog()

    # -- changes on disk ---------------------------------------------------------------------

    def hand_changed(self, files: tuple[str, ...]) -> None:
        """Files changed by hand (the watcher's ``index_rebuilt``): show them as reloaded,
        once a burst has settled."""
        self._changed.update(files)
        self.set_timer(DEBOUNCE_SECONDS, self._flush_changes)

    def _flush_changes(self) -> None:
        changed, self._changed = tuple(sorted(self._changed)), set()
        if changed:
            self.reloaded(changed)
            self.app.notify(t("mem.reloaded", files=", ".join(changed)),
                            title=t("panel.memory"))

    # -- state ----------------------------------------------------------------------------

    def reset(self, run: RunInfo | None = None) -> None:
        """A new run: no store until the session shows its own (:meth:`show_store`)."""
        self.show_store(None)

    def show_store(self, store: MemoryStore | None) -> None:
        """The store to list (None: none), and nothing recalled or rejected yet."""
        self.store = store
        self.recalled = set()
        self.rejected = []
        self.border_subtitle = ""
        self.refresh_catalog()

    def selected(self, files: tuple[str, ...]) -> None:
        self.recalled = set(files)
        self.refresh_catalog()

    def rejected_candidate(self, name: str, reason: str) -> None:
        self.rejected = [*self.rejected, (name, reason)][-4:]
        self.refresh_catalog()

    def reloaded(self, changed: tuple[str, ...]) -> None:
        shown = ", ".join(changed[:3]) + ("…" if len(changed) > 3 else "")
        self.border_subtitle = t("mem.reloaded", files=shown)
        self.refresh_catalog()

    def refresh_catalog(self) -> None:
        store = self.store
        records = store.records() if store else []
        invalid = store.invalid() if store else []
        self.rows = [CatalogRow(r.file, f" {r.type} ", TYPE_STYLE.get(r.type, "reverse"),
                                r.name, "bold $recalled" if r.file in self.recalled else "bold",
                                "★ " if r.file in self.recalled else "", r.description)
                     for r in records]
        self.rows += [CatalogRow(f"!{bad.file}", f" {t('mem.invalid')} ",
                                 "bold $background on $error", bad.file, "$error", "",
                                 bad.reason) for bad in invalid]
        self.fill_table(force=True)
        self.show_detail()
        notes = [Content.assemble((t("mem.count", n=len(records)), "bold"),
                                  t("mem.notes", invalid=len(invalid),
                                    recalled=len(self.recalled)))]
        notes += [Content.assemble((t("mem.rejected"), "bold $warning"), " ", f"{name}: ",
                                   (_cut(reason, 70), "dim")) for name, reason in self.rejected]
        self.query_one("#memory-notes", Static).update(Content("\n").join(notes))

    def fill_table(self, force: bool = False) -> None:
        """The rows, cut to columns that share the panel's width, in a table as tall as
        they need while ``BELOW_MIN`` lines stay under it; refilled only when the rows or
        the room changed. A hidden panel (a narrow layout) still holds every row: actions
        read the selected one."""
        table = self.query_one(DataTable)
        shape = self.measure(table)
        if not force and shape == self._shape:
            return
        height, *widths = shape
        self._shape = shape
        table.styles.height = height
        row = table.cursor_row
        table.clear()
        described = ColumnKey("description") in table.columns
        if widths[2] and not described:
            table.add_column(t("mem.col.description"), key="description", width=widths[2])
        elif not widths[2] and described:
            table.remove_column(ColumnKey("description"))
        set_widths(table, dict(zip(("type", "name", "description"), widths, strict=True)))
        tails = False
        for r in self.rows:
            name, tail = name_cell(r, widths[1], with_description=not widths[2])
            tails = tails or tail
            cells = (name, cut(r.description, widths[2])) if widths[2] else (name,)
            table.add_row(Content.styled(r.badge, r.badge_style), *cells, key=r.key)
        label = t("mem.col.name_description") if tails else t("mem.col.name")
        table.columns[ColumnKey("name")].label = Text(label)
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1))

    def measure(self, table: DataTable[Content | str]) -> tuple[int, int, int, int]:
        """``(height, type, name, description)`` for the rows in the panel's room; a
        panel with no size yet keeps the last shape (names whole, no description at first)."""
        inner = self.scrollable_content_region
        name = max([cell_len(t("mem.col.name")), *(cell_len(r.mark + r.name) for r in self.rows)])
        badge = max([cell_len(t("mem.col.type")), *(cell_len(r.badge) for r in self.rows)])
        if not inner.width:
            return (self._shape or (len(self.rows) + 1, badge, name, 0))
        height = max(min(len(self.rows) + 1, inner.height - BELOW_MIN), 2)
        space = room(table, inner.width, len(self.rows) + 1 > height, 3)
        return (height, *column_widths(space, badge, name, table.cell_padding))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.show_detail()

    def show_detail(self) -> None:
        """The selected record's description in full — or, for a file that is not a valid
        record, the whole reason: a table column is too narrow to say why."""
        detail = self.query_one("#memory-detail", Static)
        key = self.current_file()
        store = self.store
        if key is None or store is None:
            detail.update("")
            return
        if key.startswith("!"):
            reason = next((b.reason for b in store.invalid() if b.file == key[1:]), "")
            detail.update(Content.assemble((f"{key[1:]}: ", "bold $error"),
                                           (t("mem.why_invalid"), "$error"), reason))
            return
        record = next((r for r in store.records() if r.file == key), None)
        if record is not None:
            detail.update(Content.assemble((f"{record.name}: ", "bold"), record.description,
                                           (f"  ({record.file})", "dim")))

    def current_file(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return str(key) if key else None

    # -- actions --------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit()

    def action_edit(self) -> None:
        from tui.screens.memory_editor import MemoryEditor

        file = self.current_file()
        if self.store is None or file is None:
            return
        file = file.lstrip("!")
        try:
            text = (self.store.root / file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.app.notify(t("mem.cannot_read", file=file, error=exc.strerror),
                            severity="error")
            return
        self.app.push_screen(MemoryEditor(self.store, file, text), self._after_edit)

    def action_new(self) -> None:
        from tui.screens.memory_editor import MemoryEditor, new_record_text

        if self.store is not None:
            self.app.push_screen(MemoryEditor(self.store, None, new_record_text()),
                                 self._after_edit)

    def _after_edit(self, saved: str | None) -> None:
        if saved:
            self.app.notify(t("mem.saved", file=saved))
            self.border_subtitle = t("mem.saved", file=saved)
        self.refresh_catalog()

    def action_delete(self) -> None:
        from tui.screens.confirm import Confirm

        file = self.current_file()
        if self.store is None or file is None:
            return
        file = file.lstrip("!")

        def done(ok: bool | None) -> None:
            if not ok or self.store is None:
                return
            try:
                self.store.delete(file)
            except (MemoryStoreError, OSError) as exc:
                self.app.notify(str(exc), severity="error")
                return
            self.app.notify(t("mem.deleted", file=file))
            self.refresh_catalog()

        self.app.push_screen(Confirm(t("mem.confirm_delete", file=file)), done)

    def action_external(self) -> None:
        file = self.current_file()
        if self.store is None or file is None:
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        path = self.store.root / file.lstrip("!")
        with self.app.suspend():
            try:
                subprocess.call([*shlex.split(editor), str(path)])
            except OSError as exc:
                self.app.notify(f"{editor}: {exc.strerror}", severity="error")
        self.refresh_catalog()

    def action_index(self) -> None:
        from tui.messages import OpenText

        if self.store is None:
            return
        try:  # the file itself, as the model's catalog is rendered from the same records
            text = self.store.index_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = self.store.index_text()
        self.post_message(OpenText(INDEX_NAME, text or t("mem.index_empty") + "\n",
                                   "markdown"))


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
