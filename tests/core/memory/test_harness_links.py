"""The memory store writes only inside its workspace, and no file in it can hang a read.

A workspace can ship links (a cloned repository can): ``.memory`` or ``.memory/.history``
linked to a folder outside, ``MEMORY.md`` or ``.lock`` linked to a file outside. Each is
refused with one line that names it, and nothing outside changes — before, a linked
``.memory`` took every record write, and a linked ``.history`` had its half-built folders
swept and its old snapshots pruned. Record files are hand-edited, so a FIFO, a device or a
huge file among them, or under ``MEMORY.md`` or the journal's name, is reported, never
waited on or read whole.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from core.events import Error, MemoryConsolidationFailed
from core.harness_paths import HarnessPathError
from core.memory import journal
from core.memory.consolidate import consolidate_memories
from core.memory.index import load_entry
from core.memory.store import MemoryStore
from tests.core.memory.conftest import document, run, tree_hashes
from tui.cli import main

VICTIM = "export PATH=/usr/bin\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.md").write_text(document("keep", "outside"), encoding="utf-8")
    return folder


def within(seconds: float, work) -> object:
    """Run ``work`` in a thread; fail (rather than hang the suite) if it does not end."""
    result: list[object] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # re-raised below, in the test's own thread
            result.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def test_a_linked_memory_folder_is_refused_and_nothing_outside_changes(tmp_path, outside):
    ws = tmp_path / "ws"
    ws.mkdir()
    writer = MemoryStore(ws / ".memory")  # opened while there was no folder yet
    (ws / ".memory").symlink_to(outside, target_is_directory=True)
    before = tree_hashes(outside)
    with pytest.raises(HarnessPathError, match=r"\.memory is a symbolic link"):
        MemoryStore(ws / ".memory")
    with pytest.raises(HarnessPathError, match="symbolic link"):
        writer.write("n", "d", "user", "b")
    store = MemoryStore(ws / ".memory", read_only=True)  # reading writes nothing
    assert [r.file for r in store.records()] == ["keep.md"]
    assert tree_hashes(outside) == before


def test_ctxlab_memory_on_a_linked_folder_is_one_line_and_exit_2(tmp_path, outside, capsys,
                                                                   monkeypatch):
    (tmp_path / ".memory").symlink_to(outside, target_is_directory=True)
    before = tree_hashes(outside)
    monkeypatch.chdir(tmp_path)
    for action in ("consolidate", "reindex"):
        assert main(["memory", action]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "symbolic link" in err, err
    assert tree_hashes(outside) == before


def test_ctxlab_run_on_a_linked_memory_folder_is_one_line_and_exit_2(tmp_path, outside, capsys):
    """A refused harness folder is bad input, like a refused session file: exit 2."""
    (tmp_path / ".memory").symlink_to(outside, target_is_directory=True)
    before = tree_hashes(outside)
    code = main(["run", "--headless", "--scenario", "refactor-auth", "--workspace",
                 str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "symbolic link" in err, err
    assert tree_hashes(outside) == before


def test_a_linked_history_folder_is_never_written_swept_or_pruned(root, outside, recorder):
    for i in range(journal.HISTORY_KEEP + 2):  # enough complete "snapshots" to be pruned
        (outside / f"2026010{i:02}T000000.000000Z").mkdir()
        (outside / f"2026010{i:02}T000000.000000Z" / "manifest.json").write_text("{}")
    (outside / ".tmp-20260102T000000.000000Z-deadbeef").mkdir()  # would be swept
    root.mkdir()
    for i in range(2):
        (root / f"r{i}.md").write_text(document(f"r{i}", "d", body="same"), encoding="utf-8")
    store = MemoryStore(root, recorder)  # opened before the link was planted
    (root / ".history").symlink_to(outside, target_is_directory=True)
    before = tree_hashes(outside)
    with pytest.raises(HarnessPathError, match=r"\.history is a symbolic link"):
        MemoryStore(root, recorder)
    result = run(consolidate_memories(store, force=True))
    assert not result.ok and "symbolic link" in result.reason
    assert recorder.of(MemoryConsolidationFailed)
    assert tree_hashes(outside) == before
    assert sorted(p.name for p in root.glob("r*.md")) == ["r0.md", "r1.md"]


@pytest.mark.parametrize("name", ["MEMORY.md", ".lock"])
def test_a_linked_index_or_lock_is_refused_and_kept(root, tmp_path, name):
    root.mkdir()
    victim = tmp_path / "victim"
    victim.write_text(VICTIM)
    store = MemoryStore(root)  # opened before the link was planted
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(victim)
    with pytest.raises(HarnessPathError, match=f"{name} is a symbolic link"):
        store.write("n", "d", "user", "b")
    assert victim.read_text() == VICTIM and (root / name).is_symlink()


@pytest.mark.parametrize("name", ["MEMORY.md", ".lock"])
def test_a_fifo_index_or_lock_is_refused_without_blocking(root, name):
    root.mkdir()
    os.mkfifo(root / name)
    with pytest.raises(HarnessPathError,
                       match=f"{name} is a FIFO \\(named pipe\\), not a regular file"):
        within(10, lambda: MemoryStore(root).write("n", "d", "user", "b"))


def test_an_index_linked_to_dev_zero_is_refused_not_read(root):
    root.mkdir()
    (root / "MEMORY.md").symlink_to("/dev/zero")
    store = MemoryStore(root)
    with pytest.raises(HarnessPathError, match="symbolic link"):
        within(10, lambda: store.rebuild_index())


def test_a_fifo_journal_is_a_failed_recovery_not_a_hang(root, recorder):
    root.mkdir()
    os.mkfifo(root / journal.JOURNAL_NAME)
    within(10, lambda: MemoryStore(root, recorder))
    assert any("unreadable" in e.message for e in recorder.of(Error))


def test_a_record_swapped_for_a_fifo_after_the_listing_is_reported_not_waited_on(root):
    """The scan stats each name when it lists the folder, then reads it: a name replaced
    by a FIFO meanwhile used to block the read (and the scan) until a writer came."""
    root.mkdir()
    (root / "x.md").write_text(document("x", "d"), encoding="utf-8")
    listed = os.lstat(root / "x.md")
    (root / "x.md").unlink()
    os.mkfifo(root / "x.md")
    try:
        entry = within(10, lambda: load_entry(root, "x.md", listed))
    finally:  # unblock a reader that did block, so the thread can end
        try:
            os.close(os.open(root / "x.md", os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert "FIFO" in entry.reason

