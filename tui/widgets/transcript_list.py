"""The "Transcripts" panel: every file the stages wrote, newest first, and who wrote it.

Everything compaction takes out of the context lands in ``.transcripts/`` (whole lists before
snip and summaries) or ``.task_outputs/tool-results/`` (single results behind pointers).
Listing them — with the stage that wrote each, known from the ``files`` of stage events —
shows a learner that nothing was thrown away. Rescanning two small folders is cheap, so the
list is simply rebuilt after each stage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.widgets import DataTable

from core.archive.store import MANIFEST, RESULTS_DIR, TRANSCRIPT_DIR
from core.events import Stage
from tui.i18n import t
from tui.routing import Routed, handles
from tui.widgets.render import short_size

FRAME_S = 1 / 60  # stage events arriving within one frame share one rescan
# The hashes ctxlab appends to a result's id (of the id, then of the content; older
# archives have one or two): left out of the name shown.
_HASHES = re.compile(r"(?:-[0-9a-f]{8,64}){1,2}$")


@dataclass(frozen=True)
class ArchiveFile:
    rel: str
    size: int
    mtime_ns: int


def scan_archive(workspace: Path, written: Sequence[str] = ()) -> list[ArchiveFile]:
    """Transcripts and result files of a workspace, newest first (manifest left out).

    File times advance by the kernel's clock tick, so files one stage wrote back to back
    often share an mtime: ``written`` (relative paths in the order stages reported them)
    orders those, and the name only what neither tells apart.
    """
    found: list[ArchiveFile] = []
    for folder, pattern in ((TRANSCRIPT_DIR, "*.jsonl"), (RESULTS_DIR, "*.txt")):
        try:
            entries = list((workspace / folder).glob(pattern))
        except OSError:
            continue
        for path in entries:
            if path.name == MANIFEST or path.name.startswith("."):
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            found.append(ArchiveFile((folder / path.name).as_posix(), st.st_size,
                                     st.st_mtime_ns))
    order = {rel: i for i, rel in enumerate(written)}
    found.sort(key=lambda f: (f.mtime_ns, order.get(f.rel, -1), f.rel), reverse=True)
    return found


def display_name(rel: str) -> str:
    """A short, still distinctive name: ``transcript 35e40eb0`` or ``toolu_006_0``."""
    name = Path(rel).name
    if name.startswith("transcript_") and name.endswith(".jsonl"):
        return t("tx.transcript", id=name[len("transcript_"):][:8])
    stem = _HASHES.sub("", Path(name).stem) or Path(name).stem
    return stem if len(stem) <= 19 else stem[:18] + "…"


class TranscriptList(Routed, DataTable):
    """Archive files with size and writer; Enter opens one in the viewer."""

    class Open(Message):
        def __init__(self, rel: str) -> None:
            super().__init__()
            self.rel = rel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.border_title = t("panel.transcripts")
        self.writers: dict[str, str] = {}
        self.workspace: Path | None = None
        self._rescan_due = False
        self._shown: list[tuple[str, str, str, str]] = []  # the rows on screen

    def on_mount(self) -> None:
        # Fixed widths: an auto width remembers the widest row ever shown, so it would
        # depend on how refreshes happened to batch.
        self.add_column(t("tx.col.file"), key="file", width=19)
        self.add_column(t("tx.col.size"), key="size", width=5)
        self.add_column(t("tx.col.stage"), key="stage", width=16)

    def reset(self, workspace: Path) -> None:
        self.workspace = workspace
        self.writers.clear()
        self.refresh_files()

    @handles(Stage)
    def note_stage(self, event: Stage) -> None:
        """Note the writer; rescan once per frame, however many stages fired in it (each
        rescan lists and stats both folders, and one ``prepare()`` can fire several)."""
        for rel in event.files:
            self.writers.setdefault(rel, event.stage)
        if not self._rescan_due:
            self._rescan_due = True
            self.set_timer(FRAME_S, self._rescan)

    def _rescan(self) -> None:
        self._rescan_due = False
        self.refresh_files()

    def refresh_files(self) -> None:
        if self.workspace is None:
            return
        files = scan_archive(self.workspace, tuple(self.writers))
        rows = [(display_name(f.rel), short_size(f.size),
                 self.writers.get(f.rel, t("tx.earlier")), f.rel) for f in files]
        if rows != self._shown:  # a rebuilt table re-renders every line from scratch
            self._shown = rows
            self.clear()
            for name, size, writer, rel in rows:
                self.add_row(name, size, writer, key=rel)
        n_t = sum(1 for f in files if f.rel.endswith(".jsonl"))
        self.border_subtitle = t("tx.transcripts", n=n_t) + " · " + t("tx.results",
                                                                       n=len(files) - n_t)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.post_message(self.Open(str(event.row_key.value)))
