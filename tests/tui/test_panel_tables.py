"""Memory and Transcripts: their tables use the room their panel has — every record when it
fits, names and writers whole when they fit, the description when there is room after the
names — and a cut ends in "…", never silently."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import DataTable

from tests.tui.conftest import play_to_end, wait_for
from tui.app import CtxlabApp
from tui.widgets.memory_catalog import BELOW_MIN, MemoryCatalog
from tui.widgets.memory_rows import DESC_MIN
from tui.widgets.transcript_list import TranscriptList

pytestmark = pytest.mark.anyio

EXTRA = ["Deploy window", "Commit style", "Python version", "Test command", "Auth owner",
         "Legacy login freeze", "Review checklist"]


def record_text(name: str) -> str:
    return (f"---\nname: {name}\ndescription: What to know about {name.lower()} here\n"
            f"type: project\n---\n\nBody of {name}.\n")


def lines(table: DataTable) -> list[str]:  # type: ignore[type-arg]
    """The table's lines as they are on screen (header first)."""
    return ["".join(s.text for s in table.render_line(y)) for y in range(table.size.height)]


async def nine_records(app: CtxlabApp, pilot: object, ws: Path) -> MemoryCatalog:
    await play_to_end(pilot)  # type: ignore[arg-type]
    for name in EXTRA:
        (ws / ".memory" / f"{name.lower().replace(' ', '-')}.md").write_text(record_text(name))
    panel = app.query_one(MemoryCatalog)
    table = panel.query_one(DataTable)
    await wait_for(pilot, lambda: table.row_count == 9, timeout=3.0)  # type: ignore[arg-type]
    panel.rejected_candidate("no new files", "scope is 'current_task', not 'persistent'")
    panel.rejected_candidate("edit instead of create", "temporary marker 'for now'")
    await pilot.press("6")  # type: ignore[attr-defined]  # shown, whatever the layout
    await pilot.pause(0.2)  # type: ignore[attr-defined]
    return panel


@pytest.mark.parametrize("size", [(160, 48), (200, 55), (240, 70)])
async def test_memory_shows_the_records_it_has_room_for_whole(
        make_app: Callable[..., CtxlabApp], tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        panel = await nine_records(app, pilot, tmp_path / "ws")
        table = panel.query_one(DataTable)
        inner = panel.scrollable_content_region
        # Every record shows when the panel has its rows plus a few lines for the detail.
        if inner.height >= table.row_count + 1 + BELOW_MIN:
            assert table.size.height - 1 >= table.row_count, (inner, table.size)
        assert panel.query_one("#memory-detail").region.height >= 1  # the detail still shows
        shown = "\n".join(lines(table))
        store = panel.store
        assert store is not None
        records = store.records()
        longest = max(cell_len(("★ " if r.file in panel.recalled else "") + r.name)
                      for r in records)
        badge = max(cell_len(f" {r.type} ") for r in records)
        space = inner.width - 2 * 3 - (table.styles.scrollbar_size_vertical
                                       if table.row_count + 1 > table.size.height else 0)
        if space - badge >= longest:  # room for every name
            assert all(r.name in shown for r in records), shown
        if space - badge >= longest + DESC_MIN:  # room for a description after the names
            assert all(r.description[:DESC_MIN - 1] in shown for r in records), shown
        else:  # no room for a column: a short name is followed by the start of its text
            short = min(records, key=lambda r: cell_len(r.name))
            if space - badge >= cell_len(short.name) + 2 + 12:
                assert f"{short.name} — {short.description[:5]}" in shown, shown
        # What was reported, whatever the formulas above decide: all nine rows at 160×48,
        # and descriptions on screen from 200×55 on (none appeared even at 200×55).
        assert table.size.height - 1 >= 9 and all(r.name[:8] in shown for r in records), shown
        if size[0] >= 200:
            assert any(r.description[:8] in shown for r in records), shown


@pytest.mark.parametrize("size", [(160, 48), (200, 55)])
async def test_transcripts_show_who_wrote_each_file_or_cut_it_visibly(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await play_to_end(pilot)
        await pilot.press("5")
        await pilot.pause(0.2)
        table = app.query_one(TranscriptList)
        rows = table.listing_rows()
        on_screen = lines(table)[1:]
        names = max(cell_len(r[0]) for r in rows)
        writers = max(cell_len(r[2]) for r in rows)
        scrollbar = table.styles.scrollbar_size_vertical \
            if len(rows) + 1 > table.size.height else 0
        room = table.size.width - scrollbar - 2 * 3 - 5
        for (name, _, writer, _), line in zip(rows, on_screen, strict=False):
            assert name in line, line  # the file name has the room first
            if room >= names + writers:
                assert writer in line, line
            else:
                assert writer in line or (writer[:4] in line and "…" in line), line
