"""The Transcripts panel lists files newest first, also when two share a timestamp.

File times on ext4 advance by the kernel's clock tick (a few milliseconds), so two results
one stage writes back to back often carry the same mtime; the order the stages reported
them in must then decide, not the names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.archive.store import RESULTS_DIR
from tui.widgets.transcript_list import scan_archive


def test_files_with_the_same_mtime_are_listed_in_reverse_write_order(tmp_path: Path) -> None:
    folder = tmp_path / RESULTS_DIR
    folder.mkdir(parents=True)
    written = [f"{RESULTS_DIR.as_posix()}/{name}" for name in ("toolu_b.txt", "toolu_a.txt")]
    for rel in written:
        (tmp_path / rel).write_text("x")
        os.utime(tmp_path / rel, ns=(1_000_000_000, 1_000_000_000))
    assert [f.rel for f in scan_archive(tmp_path, written)] == written[::-1]
    # without the write order, names still give one stable order
    assert [f.rel for f in scan_archive(tmp_path)] == sorted(written, reverse=True)


@pytest.mark.anyio
async def test_stages_within_one_frame_share_one_rescan(tmp_path: Path, monkeypatch) -> None:
    from textual.app import App, ComposeResult

    import tui.widgets.transcript_list as listing
    from core.events import Stage
    from tui.widgets.transcript_list import TranscriptList

    scans: list[Path] = []
    real = listing.scan_archive
    monkeypatch.setattr(listing, "scan_archive",
                        lambda ws, written=(): scans.append(ws) or real(ws, written))

    class Host(App):
        def compose(self) -> ComposeResult:
            yield TranscriptList()

    def stage(name: str, files: tuple[str, ...]) -> Stage:
        return Stage(stage=name, before_chars=10, after_chars=5, before_messages=1,
                     after_messages=1, files=files, tool_use_ids=(), ledger=())

    async with Host().run_test() as pilot:
        widget = pilot.app.query_one(TranscriptList)
        widget.reset(tmp_path)
        scans.clear()
        for name in ("tool_result_budget", "snip_compact", "micro_compact"):
            widget.note_stage(stage(name, (f"{RESULTS_DIR.as_posix()}/{name}.txt",)))
        assert scans == []  # nothing rescanned inside the burst
        await pilot.pause(0.1)
        assert scans == [tmp_path]
        assert list(widget.writers) == [f"{RESULTS_DIR.as_posix()}/{n}.txt" for n in
                                        ("tool_result_budget", "snip_compact", "micro_compact")]


@pytest.mark.anyio
async def test_a_rescan_that_finds_the_same_files_leaves_the_table_alone(
        tmp_path: Path, monkeypatch) -> None:
    """Rebuilding the table re-renders all of it: a rescan that finds what is already
    listed must not cost that, and one that finds a new file shows it."""
    from textual.app import App, ComposeResult

    from tui.widgets.transcript_list import TranscriptList

    folder = tmp_path / RESULTS_DIR
    folder.mkdir(parents=True)
    (folder / "toolu_a.txt").write_text("x")
    cleared: list[int] = []
    real_clear = TranscriptList.clear
    monkeypatch.setattr(TranscriptList, "clear",
                        lambda self, *a, **k: cleared.append(1) or real_clear(self, *a, **k))

    class Host(App):
        def compose(self) -> ComposeResult:
            yield TranscriptList()

    async with Host().run_test() as pilot:
        widget = pilot.app.query_one(TranscriptList)
        widget.reset(tmp_path)
        assert [str(k.value) for k in widget.rows] == [f"{RESULTS_DIR.as_posix()}/toolu_a.txt"]
        cleared.clear()
        widget.refresh_files()
        widget.refresh_files()
        assert cleared == []
        (folder / "toolu_b.txt").write_text("y")
        widget.refresh_files()
        assert cleared == [1]
        assert {str(k.value) for k in widget.rows} == {
            f"{RESULTS_DIR.as_posix()}/toolu_a.txt", f"{RESULTS_DIR.as_posix()}/toolu_b.txt"}
