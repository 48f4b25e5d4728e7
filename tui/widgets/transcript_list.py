"""The "Transcripts" panel: every file the stages wrote, newest first, and who wrote it.

Everything compaction takes out of the context lands in ``.transcripts/`` (whole lists before
snip and summaries) or ``.task_outputs/tool-results/`` (single results behind pointers).
Listing them — with the stage that wrote each — shows a learner that nothing was thrown
away. The list is what the archive reports, never a scan of the folders: ``archive_listing``
says what the workspace held before this run, and each ``stage`` event names the files it
wrote, with the archive's record of each (``archived``: a transcript or a result, which
tool result, how many chars).

The columns follow the panel's width (see :mod:`tui.widgets.columns`): names and writers
are whole when there is room, and the file name keeps its room first when there is not —
it is what tells one file from the next.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual import events
from textual._two_way_dict import TwoWayDict
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from core.events import ArchiveListing, Stage
from tui.i18n import t
from tui.routing import Routed, RunInfo, handles
from tui.widgets.columns import cut, room, set_widths
from tui.widgets.fixed_table import FixedWidthTable
from tui.widgets.render import short_size

SIZE_CELLS = 5  # "7,178", "240k": short_size never needs more
WRITER_MIN = 6  # the writer keeps a few cells however long the names are


@dataclass(frozen=True)
class Listed:
    """One file as the events reported it (``kind`` empty: a file the archive does not list,
    such as a summary another agent kept)."""

    rel: str
    kind: str = ""
    chars: int | None = None
    tool_use_id: str = ""
    writer: str = ""  # the stage of this run that wrote it; empty: an earlier run


def listed(rel: str, record: dict[str, Any] | None, writer: str = "") -> Listed:
    if record is None:
        return Listed(rel, writer=writer)
    return Listed(rel, str(record.get("kind", "")), int(record.get("chars", 0)),
                  str(record.get("tool_use_id", "")), writer)


def display_name(file: Listed, transcript_number: int) -> str:
    """A short, still distinctive name: ``transcript 2``, ``toolu_006_0``, or the name of
    a file the archive does not list."""
    if file.kind == "transcript":
        return t("tx.transcript", id=transcript_number)
    return file.tool_use_id if file.kind == "result" and file.tool_use_id \
        else Path(file.rel).name


def column_widths(space: int, file_want: int, writer_want: int) -> tuple[int, int, int]:
    """``(file, size, writer)`` widths in ``space`` cells: each column as wide as its widest
    cell (``file_want``, ``writer_want``) when they fit (the writer takes what is left
    over); otherwise the file column first, the writer what remains."""
    rest = max(space - SIZE_CELLS, 2)
    file = min(file_want, max(rest - WRITER_MIN, rest // 2))
    if file_want + writer_want <= rest:
        file = file_want
    return file, SIZE_CELLS, rest - file


class TranscriptList(Routed, FixedWidthTable[Any]):
    """Archive files with size and writer; Enter opens one in the viewer."""

    class Open(Message):
        def __init__(self, rel: str) -> None:
            super().__init__()
            self.rel = rel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.border_title = t("panel.transcripts")
        self.files: dict[str, Listed] = {}  # in the order they were reported
        self._shown: list[tuple[str, str, str, str]] = []  # the rows on screen
        # Kept as the files come, oldest first, so a routing works on its new files only
        # (a long replay's archive holds thousands): each file's row, the widest name and
        # writer, the count of each kind, and the rows as last cut to the columns.
        self._rows: list[tuple[str, str, str, str]] = []
        self._at: dict[str, int] = {}  # a file's place in ``_rows``
        self._widest = (0, 0)
        self._kinds: dict[str, int] = {}
        self._cut: list[tuple[str, str, str, str]] = []
        self._cut_widths: tuple[int, int, int] | None = None
        self._transcripts = 0  # transcripts listed: each is named by its number
        self._earlier = t("tx.earlier")  # the writer of a file an earlier run wrote

    def on_mount(self) -> None:
        self.add_column(t("tx.col.file"), key="file", width=12)
        self.add_column(t("tx.col.size"), key="size", width=SIZE_CELLS)
        self.add_column(t("tx.col.stage"), key="stage", width=12)
        self.refresh_files()

    def on_resize(self, event: events.Resize) -> None:
        self.refresh_files()

    def reset(self, run: RunInfo | None = None) -> None:
        """A new run: nothing listed until its events say what its archive holds."""
        self.files.clear()
        self._forget_rows()
        self.refresh_files()

    def _add(self, file: Listed) -> None:
        """A file reported for the first time: its row joins the kept ones."""
        self.files[file.rel] = file
        if file.kind == "transcript":
            self._transcripts += 1
        row = (display_name(file, self._transcripts),
               short_size(file.chars) if file.chars is not None else "—",
               file.writer or self._earlier, file.rel)
        self._at[file.rel] = len(self._rows)
        self._rows.append(row)
        names, writers = self._widest
        self._widest = (max(names, cell_len(row[0])), max(writers, cell_len(row[2])))
        self._kinds[file.kind] = self._kinds.get(file.kind, 0) + 1

    def _rewrite(self, rel: str, writer: str) -> None:
        """A listed file's writer changed: its row, and its cut row while the columns
        hold (a file cut longer than they allow moves them, and every row is cut again)."""
        at = self._at[rel]
        name, size, _, _ = self._rows[at]
        self._rows[at] = (name, size, writer, rel)
        names, writers = self._widest
        self._widest = (names, max(writers, cell_len(writer)))
        if at < len(self._cut) and self._cut_widths is not None:
            file, size_cells, writer_cells = self._cut_widths
            self._cut[at] = (cut(name, file), cut(size, size_cells), cut(writer, writer_cells),
                             rel)

    def _forget_rows(self) -> None:
        self._rows, self._widest, self._kinds, self._transcripts = [], (0, 0), {}, 0
        self._at = {}
        self._cut, self._cut_widths = [], None

    @handles(ArchiveListing)
    def note_listing(self, event: ArchiveListing) -> None:
        for record in event.files:
            rel = str(record.get("path", ""))
            if rel and rel not in self.files:
                self._add(listed(rel, record))
        self.redraw_once(self.refresh_files)

    @handles(Stage)
    def note_stage(self, event: Stage) -> None:
        """Note each file with the first stage of this run that wrote it; one table update
        per batch of events, however many stages fired in it."""
        records = {str(r.get("path", "")): r for r in event.archived}
        for rel in event.files:
            known = self.files.get(rel)
            if known is None:
                self._add(listed(rel, records.get(rel), event.stage))
            elif not known.writer:  # an earlier run's file this run wrote again
                self.files[rel] = replace(known, writer=event.stage)
                self._rewrite(rel, event.stage)
        self.redraw_once(self.refresh_files)

    def listing_rows(self) -> list[tuple[str, str, str, str]]:
        """``(name, size, writer, path)`` per file, newest first."""
        return self._rows[::-1]

    def refresh_files(self) -> None:
        if not self.is_mounted:
            return
        rows = self.fitted()
        if rows != self._shown:  # a rebuilt table re-renders every line from scratch
            new = len(rows) - len(self._shown)
            if new > 0 and rows[new:] == self._shown:  # only newer files: add just those
                self.add_newest(rows[:new], [row[3] for row in rows])
            else:
                self.clear()
                self.add_keyed_rows([(rel, (name, size, writer))
                                     for name, size, writer, rel in rows])
            self._shown = rows
        kinds = self._kinds
        # files written beside the archive (another agent's summary) are "other"
        counts = [t(key, n=kinds.get(kind, 0)) for key, kind in (
            ("tx.transcripts", "transcript"), ("tx.results", "result"), ("tx.other", ""))]
        shown = [text for text, kind in zip(counts, ("transcript", "result", ""), strict=True)
                 if kind in kinds]
        self.border_subtitle = " · ".join(shown or counts[:2])

    def add_newest(self, rows: list[tuple[str, str, str, str]], order: list[str]) -> None:
        """Add the rows of files newer than those shown, above them. The table appends a row
        and measures only what it adds; a rebuild measured every row again on each stage, so
        a long replay's list cost more with each file. ``order`` is every row's key, top
        first: the table's own ``sort`` orders by cell values, which do not say which file
        is newer, so the new order is given as ``sort`` gives it, by the rows' places."""
        self.add_keyed_rows([(rel, (name, size, writer)) for name, size, writer, rel in rows])
        self._row_locations = TwoWayDict({RowKey(key): n for n, key in enumerate(order)})
        self._update_count += 1
        self.refresh()

    def fitted(self) -> list[tuple[str, str, str, str]]:
        """The rows, newest first, cut to column widths that share the panel's width
        (headers included). Rows cut before are kept while the widths hold."""
        rows = self._rows
        space = room(self, self.size.width, len(rows) + 1 > self.size.height, 3)
        if space <= 0:
            return rows[::-1]
        names, writers = self._widest
        widths = column_widths(space, max(names, cell_len(t("tx.col.file"))),
                               max(writers, cell_len(t("tx.col.stage"))))
        file, size, writer = widths
        set_widths(self, {"file": file, "size": size, "stage": writer})
        if widths != self._cut_widths:
            self._cut, self._cut_widths = [], widths
        self._cut.extend((cut(name, file), cut(n, size), cut(who, writer), rel)
                         for name, n, who, rel in rows[len(self._cut):])
        return self._cut[::-1]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.Open(str(event.row_key.value)))
