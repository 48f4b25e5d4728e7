"""The archive never writes (or trusts what it reads) through a link planted in the workspace.

A cloned workspace can ship ``.task_outputs``, ``tool-results``,
``.transcripts`` or the manifest log as links to somewhere else; every flush appended to a
linked ``manifest.jsonl`` and every result landed in a linked folder. Each case here is a
link to a place outside the workspace; the archive refuses with one line (an ``OSError``
naming the link) or carries on without it, and the place outside stays byte-for-byte.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from core.archive.manifest import MANIFEST
from core.archive.manifest_index import INDEX
from core.archive.manifest_sync import INDEX_FROM
from core.archive.store import Archive
from core.harness_paths import HarnessPathError

RESULTS = Path(".task_outputs/tool-results")
VICTIM = "export PATH=/usr/bin\n"


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() and not p.is_symlink() else "dir"
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / ".bashrc").write_text(VICTIM)
    return ws, outside


@pytest.mark.parametrize("folder", [".task_outputs", ".task_outputs/tool-results"])
def test_a_linked_results_folder_is_refused_before_anything_is_written(places, folder):
    ws, outside = places
    (ws / folder).parent.mkdir(parents=True, exist_ok=True)
    (ws / folder).symlink_to(outside, target_is_directory=True)
    (outside / ".result.txt.999999.0.tmp").write_text("someone else's temp file")
    before = snapshot(outside)
    archive = Archive(ws)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.persist("toolu_1", "x" * 500)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.begin_persist("toolu_2", "y" * 70_000)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        Archive(ws).manifest()  # what lies behind the link is never read as ours
    assert snapshot(outside) == before  # not written, and the temp file not swept either


@pytest.mark.parametrize("folder", [".task_outputs", ".task_outputs/tool-results"])
def test_a_folder_swapped_for_a_link_after_the_first_write_is_refused_too(places, folder):
    """The model's own ``bash`` can replace a folder mid-session: the archive notices the
    change before its next write instead of trusting its first check."""
    import shutil

    ws, outside = places
    archive = Archive(ws)
    archive.persist("toolu_1", "x" * 500)
    archive.flush()
    before = snapshot(outside)
    shutil.rmtree(ws / folder)
    (ws / folder).parent.mkdir(parents=True, exist_ok=True)
    (ws / folder).symlink_to(outside, target_is_directory=True)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.persist("toolu_2", "y" * 500)
        archive.flush()
    assert snapshot(outside) == before


def _swap_for_link(ws: Path, folder: str, outside: Path) -> None:
    import shutil

    shutil.rmtree(ws / folder)
    (ws / folder).symlink_to(outside, target_is_directory=True)


def _write_transcript(archive: Archive, ws: Path) -> None:
    archive.write_transcript([{"role": "user", "content": "secret history"}])


def _persist(archive: Archive, ws: Path) -> None:
    archive.persist("toolu_2", "y" * 500)


def _adopt(archive: Archive, ws: Path) -> None:
    spool = ws / "spool.txt"
    spool.write_text("z" * 500)
    archive.adopt("toolu_3", spool)


@pytest.mark.parametrize(("folder", "write"), [
    (".transcripts", _write_transcript),
    (".task_outputs/tool-results", _persist),
    (".task_outputs/tool-results", _adopt),
])
def test_a_write_outside_a_stage_checks_its_folder_again(places, folder, write):
    """A write no stage flushes (an API compaction's transcript, a tool output kept whole)
    trusts no earlier check: the model's ``bash`` may have swapped the folder since."""
    ws, outside = places
    archive = Archive(ws)
    archive.write_transcript([{"role": "user", "content": "hi"}])
    archive.persist("toolu_1", "x" * 500)  # no flush: neither is inside a stage
    before = snapshot(outside)
    _swap_for_link(ws, folder, outside)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        write(archive, ws)
    assert snapshot(outside) == before


def test_a_stage_checks_its_folder_again_after_its_flush(places):
    """Inside a stage a folder is checked once; the flush that ends it ends that trust."""
    ws, outside = places
    archive = Archive(ws)
    archive.open_stage()
    archive.persist("toolu_1", "x" * 500)
    archive.flush()
    before = snapshot(outside)
    _swap_for_link(ws, ".task_outputs/tool-results", outside)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.persist("toolu_2", "y" * 500)
    assert snapshot(outside) == before


def test_a_linked_transcripts_folder_is_refused(places):
    ws, outside = places
    (ws / ".transcripts").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        Archive(ws).write_transcript([{"role": "user", "content": "hi"}])
    assert snapshot(outside) == before


@pytest.mark.parametrize("target", [".bashrc", "not-there-yet"])
def test_a_linked_manifest_log_is_never_appended_to_or_read(places, target):
    ws, outside = places
    (ws / RESULTS).mkdir(parents=True)
    (ws / RESULTS / MANIFEST).symlink_to(outside / target)
    before = snapshot(outside)
    archive = Archive(ws)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.persist("$(touch X)", "x" * 500)
        archive.flush()
    assert snapshot(outside) == before
    assert not (outside / target).exists() or (outside / target).read_text() == VICTIM


def test_a_linked_lock_is_refused_with_one_line(places):
    ws, outside = places
    (ws / RESULTS).mkdir(parents=True)
    (ws / RESULTS / ".manifest.lock").symlink_to(outside / ".bashrc")
    before = snapshot(outside)
    archive = Archive(ws)
    archive.persist("toolu_1", "x" * 500)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        archive.flush()
    assert snapshot(outside) == before


@pytest.mark.parametrize("name", ["", "-journal"])
def test_a_linked_index_is_reported_and_the_index_kept_in_memory(places, name):
    """A long log wants its index on disk; a link where it (or its journal) goes makes
    sqlite write through it, so the index is kept in memory instead, and that is said."""
    ws, outside = places
    archive = Archive(ws)
    n = 0
    while not (ws / RESULTS / MANIFEST).exists() or \
            (ws / RESULTS / MANIFEST).stat().st_size < INDEX_FROM:
        for _ in range(400):
            archive.persist(f"toolu_{n}", f"result {n} " * 20)
            n += 1
        archive.flush()
    for suffix in ("", "-journal"):
        if os.path.lexists(ws / RESULTS / f"{INDEX}{suffix}"):
            os.unlink(ws / RESULTS / f"{INDEX}{suffix}")
    (ws / RESULTS / f"{INDEX}{name}").symlink_to(outside / ".bashrc")
    before = snapshot(outside)
    reader = Archive(ws)
    assert len(reader.manifest()) == n
    reader.persist("toolu_more", "more " * 40)
    reader.flush()
    assert snapshot(outside) == before
    assert [p for p in reader.problems if "symbolic link" in p]
    assert len(Archive(ws).manifest()) == n + 1


def test_ctxlab_compact_in_a_workspace_with_a_linked_results_folder_is_one_line_exit_2(
        tmp_path, capsys):
    """Refused like any other input ctxlab will not use: exit 2, and the outside untouched."""
    from tui.cli import main

    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "w"
    (work / ".task_outputs").mkdir(parents=True)
    (work / ".task_outputs" / "tool-results").symlink_to(outside, target_is_directory=True)
    history = tmp_path / "history.json"
    history.write_text(json.dumps(
        [{"role": "user", "content": "go"},
         {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                            "input": {"command": "cat big"}}]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                       "content": "x" * 200_000}]}]), encoding="utf-8")
    code = main(["compact", str(history), "--workdir", str(work)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "symbolic link" in err, err
    assert list(outside.iterdir()) == []
