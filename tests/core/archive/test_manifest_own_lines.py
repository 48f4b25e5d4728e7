"""A process indexes the lines it appends from the rows it built them from, without reading
them back: what it answers afterwards must equal what a full parse of the log answers, for
itself, for a fresh reader, and with another process appending at the same time (whose
lines must be seen whole, never half)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import core.archive.manifest_sync as manifest_sync
from core.archive.manifest import MANIFEST
from core.archive.manifest_index import CHECK_BYTES, Stamp
from core.archive.store import Archive
from tests.core.archive.test_manifest_index import assert_same_as_full_parse, reference

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ".task_outputs/tool-results"

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.archive.store import Archive
    archive = Archive(Path(sys.argv[1]))
    for i in range(int(sys.argv[3])):
        path = archive.persist(f"toolu_{sys.argv[2]}_{i}", f"{sys.argv[2]} result {i} " * 20)
        archive.wrap(path, "preview")
        archive.flush()
""")


def _own_view_matches(archive: Archive, workspace: Path) -> None:
    entries, pointers, _ = reference(workspace)
    manifest = archive._manifest
    for path, entry in entries.items():
        assert manifest.get(path) == entry, path
        assert manifest.pointers(path) == pointers.get(path, set()), path
    assert manifest.entries == entries


@pytest.mark.parametrize("on_disk", [False, True], ids=["in memory", "on disk"])
def test_own_lines_indexed_from_memory_answer_as_a_full_parse(tmp_path, monkeypatch,
                                                              on_disk):
    if on_disk:
        monkeypatch.setattr(manifest_sync, "INDEX_FROM", 0)
    archive = Archive(tmp_path)
    for i in range(5):
        path = archive.persist(f"toolu_{i}", f"result {i} " * 30)
        archive.wrap(path, f"preview {i}")
        archive.wrap(path, f"another preview {i}")
        archive.flush()
    assert archive._manifest._log.covered == (tmp_path / RESULTS / MANIFEST).stat().st_size
    _own_view_matches(archive, tmp_path)
    assert_same_as_full_parse(tmp_path)
    assert archive.problems == []


def test_own_lines_are_not_indexed_from_memory_when_another_process_appended(tmp_path):
    """The log grew behind this process's back between two of its flushes: its next flush
    reads the other's lines (from the covered offset), then indexes its own."""
    archive = Archive(tmp_path)
    archive.persist("toolu_mine", "mine " * 40)
    archive.flush()
    other = Archive(tmp_path)
    other.persist("toolu_theirs", "theirs " * 40)
    other.flush()
    path = archive.persist("toolu_mine_2", "mine again " * 40)
    archive.wrap(path, "p")
    archive.flush()
    _own_view_matches(archive, tmp_path)
    _own_view_matches(other, tmp_path)
    assert_same_as_full_parse(tmp_path)


def test_two_processes_appending_at_once_leave_only_whole_lines(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, "40"],
                                 cwd=ROOT, env=env)
                for name in ("a", "b")]
    seen = 0
    while any(child.poll() is None for child in children):  # readers meanwhile
        seen = max(seen, len(Archive(tmp_path).manifest()))
    assert all(child.wait(timeout=60) == 0 for child in children)
    data = (tmp_path / RESULTS / MANIFEST).read_bytes()
    lines = data.split(b"\n")
    assert lines[-1] == b""
    for line in lines[:-1]:
        json.loads(line)  # every line whole
    archive = Archive(tmp_path)
    assert len(archive.manifest()) == 80 >= seen
    assert archive.problems == []
    assert_same_as_full_parse(tmp_path)


@pytest.mark.parametrize("on_disk", [False, True], ids=["in memory", "on disk"])
def test_the_stamp_of_own_appends_is_the_one_reading_the_log_makes(tmp_path, monkeypatch,
                                                                   on_disk):
    """The stamp is hashed from the log's edges this process knows (no read back): across
    the log's first 4 kB, small appends and one longer than the edges, it must equal the
    stamp of the file as read."""
    if on_disk:
        monkeypatch.setattr(manifest_sync, "INDEX_FROM", 0)
    archive = Archive(tmp_path)
    log = tmp_path / RESULTS / MANIFEST
    for i in range(40):
        count = 30 if i == 20 else 1  # one append of many lines (longer than 4 kB)
        for j in range(count):
            archive.persist(f"toolu_{i}_{j}", f"result {i} {j} " * 30)
        archive.flush()
        index = archive._manifest._log.index
        assert index is not None
        with open(log, "rb") as fh:
            expected = Stamp.of(fh.fileno(), os.fstat(fh.fileno()), log.stat().st_size)
        assert index.stamp() == expected, i
    assert log.stat().st_size > 3 * CHECK_BYTES
    assert_same_as_full_parse(tmp_path)
