"""What the archive reports: the files a stage wrote, with its records, and — once, before a
run's first stage — what an earlier run left in the workspace's archive."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.archive.listing import archive_listing
from core.archive.store import Archive
from core.events import ArchiveListing, Emitter, Recorder, RunStart, Stage
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.compact.builders import make, prepare, turns
from tests.core.sources.replay.conftest import CLAUDE


def compacted(workspace: Path) -> Recorder:
    """A history whose results go to files and whose middle is snipped into a transcript."""
    compactor, rec = make(workspace, context_limit=8_000, max_messages=6)
    prepare(compactor, turns(6, size=30_000))
    return rec


def test_a_stage_reports_the_archives_record_of_each_file_it_wrote(tmp_path: Path) -> None:
    rec = compacted(tmp_path)
    written = [s for s in rec.of(Stage) if s.files]
    assert {s.stage for s in written} >= {"fit_tool_results", "snip_compact"}
    for stage in written:
        assert [r["path"] for r in stage.archived] == list(stage.files)
        for record in stage.archived:
            text = (tmp_path / record["path"]).read_text(encoding="utf-8")
            assert record["chars"] == len(text)
            if record["kind"] == "result":
                assert record["tool_use_id"] and record["tool_use_id"] in record["path"]
            else:
                assert record["kind"] == "transcript" and record["tool_use_id"] == ""
    assert not rec.of(ArchiveListing)  # a fresh workspace: nothing held before


def test_a_later_run_first_hears_what_the_archive_already_holds(tmp_path: Path) -> None:
    earlier = [r for s in compacted(tmp_path).of(Stage) for r in s.archived]
    held = archive_listing(Archive(tmp_path))
    compactor, rec = make(tmp_path, context_limit=8_000, max_messages=6)
    prepare(compactor, turns(2, size=30_000, prefix="u"))
    prepare(compactor, turns(2, size=30_000, prefix="v"))
    [listing] = rec.of(ArchiveListing)  # once, however many calls follow
    assert rec.events[0] is listing  # before the run's first stage
    assert sorted(listing.files, key=lambda r: r["path"]) == \
        sorted(earlier, key=lambda r: r["path"])
    assert listing.files == held
    assert rec.of(Stage)  # and the run compacts on, its own files on its own stages


def test_a_replay_into_a_used_workdir_lists_it_after_run_start(tmp_path: Path) -> None:
    def replay() -> Recorder:
        recorder = Recorder()
        source = ReplaySource(load_recording(CLAUDE), ReplayOptions(workdir=tmp_path / "w"))
        source.thresholds = source.thresholds.replace(context_limit=2_000)
        asyncio.run(source.run(Emitter(sinks=[recorder])))
        return recorder

    first = replay()
    assert not first.of(ArchiveListing)
    second = replay()
    [listing] = second.of(ArchiveListing)
    order = [type(e) for e in second.events]
    assert order.index(RunStart) < order.index(ArchiveListing) < order.index(Stage)
    archived = {r["path"] for s in first.of(Stage) for r in s.archived}
    assert archived and {r["path"] for r in listing.files} == archived
