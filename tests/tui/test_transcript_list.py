"""The Transcripts panel lists what the archive reports, newest first: the files an earlier
run left (``archive_listing``), then each stage's, named and sized from the archive's
records — it reads no folder, and a burst of stages updates the table once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.widgets.data_table import ColumnKey

from core.archive.store import RESULTS_DIR, TRANSCRIPT_DIR
from core.events import ArchiveListing, Stage
from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.routing import route_batch
from tui.widgets.columns import cut
from tui.widgets.render import short_size
from tui.widgets.transcript_list import TranscriptList, display_name

pytestmark = pytest.mark.anyio
RESULTS = RESULTS_DIR.as_posix()
TRANSCRIPTS = TRANSCRIPT_DIR.as_posix()


def record(path: str, kind: str, chars: int, tool_use_id: str = "") -> dict[str, Any]:
    return {"path": path, "kind": kind, "chars": chars, "tool_use_id": tool_use_id}


def stage(name: str, *records: dict[str, Any], extra: tuple[str, ...] = ()) -> Stage:
    return Stage(stage=name, before_chars=10, after_chars=5, before_messages=1,
                 after_messages=1, files=(*(r["path"] for r in records), *extra),
                 archived=records)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield TranscriptList()


async def test_earlier_files_then_this_runs_newest_first_named_from_the_records() -> None:
    old = record(f"{TRANSCRIPTS}/transcript_aa.jsonl", "transcript", 12_000)
    kept = record(f"{RESULTS}/toolu_001_0-1a2b3c4d-00ff.txt", "result", 240_000, "toolu_001_0")
    new = record(f"{RESULTS}/toolu_a_very_long_identifier_0-9f9f.txt", "result", 3_002,
                 "toolu_a_very_long_identifier_0")
    snip = record(f"{TRANSCRIPTS}/transcript_bb.jsonl", "transcript", 800)
    async with Host().run_test() as pilot:
        widget = pilot.app.query_one(TranscriptList)
        widget.reset(Path("/nowhere"))  # nothing is read from the workspace
        await route_batch([widget], [ArchiveListing(files=(old, kept)),
                                     stage("fit_tool_results", new, kept),
                                     stage("snip_compact", snip),
                                     stage("auto_compact", extra=(".replay/c/001.md",))])
        rows = [tuple(str(cell) for cell in widget.get_row_at(i))
                for i in range(widget.row_count)]
        assert rows == [("001.md", "—", "auto_compact"),
                        ("transcript 2", "800", "snip_compact"),
                        # whole: the table is 80 cells wide (tests/tui/test_panel_tables.py
                        # checks the cuts of a narrow panel)
                        ("toolu_a_very_long_identifier_0", "3,002", "fit_tool_results"),
                        # an earlier run's file written again by this one: its writer now
                        ("toolu_001_0", "240k", "fit_tool_results"),
                        ("transcript 1", "12k", "(earlier run)")]
        assert widget.border_subtitle == "2 transcripts · 2 result files · 1 other file"
        widget.reset()
        await pilot.pause()
        assert widget.row_count == 0


async def test_newer_files_are_added_above_without_rebuilding_the_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage's new files go on top of those listed; the table is not cleared and rebuilt
    (a rebuild measured every row again, so a long replay's list cost more each stage)."""
    cleared: list[int] = []
    real_clear = TranscriptList.clear
    monkeypatch.setattr(TranscriptList, "clear",
                        lambda self, *a, **k: cleared.append(1) or real_clear(self, *a, **k))

    def burst(*names: str) -> list[Stage]:
        return [stage(name, record(f"{RESULTS}/{name}.txt", "result", 10, name))
                for name in names]

    def shown(widget: TranscriptList) -> list[str]:
        return [str(widget.get_row_at(i)[2]) for i in range(widget.row_count)]

    async with Host().run_test() as pilot:
        widget = pilot.app.query_one(TranscriptList)
        cleared.clear()
        await route_batch([widget], burst("tool_result_budget", "snip_compact",
                                          "micro_compact"))
        assert shown(widget) == ["micro_compact", "snip_compact", "tool_result_budget"]
        await route_batch([widget], burst("tool_result_budget", "snip_compact"))
        assert cleared == []  # the same files again: the table stays
        await route_batch([widget], burst("fit_tool_results", "auto_compact"))
        assert cleared == []  # two newer files: added on top
        assert shown(widget) == ["auto_compact", "fit_tool_results", "micro_compact",
                                 "snip_compact", "tool_result_budget"]  # newest first
        # the row under the cursor is the file Enter opens
        keys = [widget.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value
                for i in range(widget.row_count)]
        assert keys == [f"{RESULTS}/{n}.txt" for n in shown(widget)]


async def test_a_scenario_run_again_in_its_workspace_lists_the_first_runs_files(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    async with make_app().run_test(size=(200, 55)) as pilot:
        first = await play_to_end(pilot)
        earlier = dict(first.query_one(TranscriptList).files)
    assert earlier
    async with make_app().run_test(size=(200, 55)) as pilot:  # the same workspace
        app = await play_to_end(pilot)
        files = app.query_one(TranscriptList).files
        assert set(earlier) <= set(files)
        assert {rel for rel, f in files.items() if not f.writer} <= set(earlier)
        assert any(not f.writer for f in files.values())  # shown as an earlier run's
        on_disk = {p.relative_to(tmp_path / "ws").as_posix()
                   for folder, pattern in ((TRANSCRIPT_DIR, "*.jsonl"), (RESULTS_DIR, "*.txt"))
                   for p in (tmp_path / "ws" / folder).glob(pattern)}
        assert set(files) == on_disk


def listed_afresh(widget: TranscriptList) -> list[tuple[str, str, str]]:
    """The rows as the whole listing gives them, made from the files alone, cut to the
    columns' widths now."""
    numbers: dict[str, int] = {}
    for file in widget.files.values():
        if file.kind == "transcript":
            numbers[file.rel] = len(numbers) + 1
    widths = [widget.columns[ColumnKey(key)].width for key in ("file", "size", "stage")]
    return [(cut(display_name(file, numbers.get(file.rel, 0)), widths[0]),
             cut(short_size(file.chars) if file.chars is not None else "—", widths[1]),
             cut(file.writer or "(earlier run)", widths[2]))
            for file in reversed(widget.files.values())]


async def test_rows_kept_batch_by_batch_are_the_rows_listed_afresh() -> None:
    """The panel keeps each file's row as it comes (a routing works on its new files
    only); after every batch — new files, a longer name that moves the columns, an earlier
    run's file written again — the table shows what a listing from scratch shows."""
    def result(name: str, chars: int = 10) -> dict[str, Any]:
        return record(f"{RESULTS}/{name}.txt", "result", chars, name)

    old = record(f"{TRANSCRIPTS}/transcript_aa.jsonl", "transcript", 12_000)
    batches = [
        [ArchiveListing(files=(old, result("toolu_old")))],
        [stage("snip_compact", record(f"{TRANSCRIPTS}/transcript_{i}.jsonl", "transcript", i))
         for i in range(5)],
        [stage("micro_compact", result(f"toolu_{i}", 40_000 * i)) for i in range(30)],
        [stage("fit_tool_results", result("toolu_" + "very_long_identifier_" * 3))],
        [stage("tool_result_budget", result("toolu_old"))],  # written again: its writer
        [stage("auto_compact", extra=(".replay/c/001.md",))],
    ]
    async with Host().run_test(size=(60, 20)) as pilot:
        widget = pilot.app.query_one(TranscriptList)
        for batch in batches:
            await route_batch([widget], batch)
            rows = [tuple(str(cell) for cell in widget.get_row_at(i))
                    for i in range(widget.row_count)]
            assert rows == listed_afresh(widget)
        assert rows[-2] == (cut("toolu_old", widget.columns[ColumnKey("file")].width),
                            "10", cut("tool_result_budget",
                                      widget.columns[ColumnKey("stage")].width))
        assert widget.border_subtitle == "6 transcripts · 32 result files · 1 other file"
