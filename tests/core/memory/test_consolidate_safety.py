"""Consolidation never overwrites a file it did not read and leaves only complete
snapshots in ``.history``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.events import MemoryConsolidationFailed
from core.memory import journal
from core.memory.consolidate import consolidate_memories
from core.memory.store import MemoryStore
from tests.core.memory.conftest import document, run, tree_hashes

# A hand-written record with a field ctxlab does not know and YAML comments.
ANNOTATED = ("---\n# written by hand\nname: build tool\ndescription: The build uses make\n"
             "type: project\ntags: [build, ci]   # extra field\nowner: ops\n---\n\n"
             "Run `make` at the root.\n")


def put(root: Path, file: str, text: str, order: int) -> None:
    """Write a record file by hand with a distinct, increasing mtime (newer = larger)."""
    root.mkdir(exist_ok=True)
    (root / file).write_text(text, encoding="utf-8")
    os.utime(root / file, ns=(10**18 + order * 10**9,) * 2)


def seed_ports(root: Path) -> None:
    """Five notes that share a description but each hold a different port, plus fillers."""
    for i in range(5):
        put(root, f"note-{i}.md", document(f"note {i}", "project note", "project",
                                           f"Service {i} listens on port {8000 + i}."), i)
    for i in range(5):
        put(root, f"fact-{i}.md", document(f"fact {i}", f"fact {i}", "user", f"body {i}"), 10 + i)


def bodies(root: Path) -> set[str]:
    return {r.body for r in MemoryStore(root, read_only=True).records()}


def test_commit_replace_refuses_to_write_over_a_file_it_does_not_replace(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    (root / "theirs.md").write_text("theirs", encoding="utf-8")
    (root / "mine.md").write_text("mine", encoding="utf-8")
    with pytest.raises(journal.StoreChanged, match=r"theirs\.md"):
        journal.commit_replace(root, ["mine.md"], {"theirs.md": b"new"},
                               expected={"mine.md": b"mine"})
    assert (root / "theirs.md").read_text(encoding="utf-8") == "theirs"
    assert (root / "mine.md").read_text(encoding="utf-8") == "mine"
    assert not (root / journal.HISTORY_DIR).exists() or not any(
        (root / journal.HISTORY_DIR).iterdir())



# -- snapshots are atomic -------------------------------------------------------------------------


def fail_at(prefix: str):
    def hook(step: str) -> None:
        if step.startswith(prefix):
            raise OSError(28, "No space left on device")
    return hook


def test_a_failed_consolidation_leaves_no_partial_snapshot(root, recorder, monkeypatch):
    seed_ports(root)
    put(root, "copy.md", document("copy", "c", "user", "body 1"), 0)
    store = MemoryStore(root, recorder)
    before = tree_hashes(root, skip=(".history",))
    monkeypatch.setattr(journal, "FAULT_HOOK", fail_at("replace:manifest.json"))
    result = run(consolidate_memories(store, force=True))
    assert not result.ok and "No space left" in result.reason
    assert recorder.of(MemoryConsolidationFailed)
    assert tree_hashes(root, skip=(".history",)) == before
    history = root / journal.HISTORY_DIR
    assert not history.exists() or list(history.iterdir()) == []


def test_a_killed_snapshot_is_swept_and_never_counted(root):
    seed_ports(root)
    history = root / journal.HISTORY_DIR
    complete = [f"20260101T0000{i:02}.000000Z" for i in range(journal.HISTORY_KEEP)]
    for name in complete:
        (history / name / "old").mkdir(parents=True)
        (history / name / "manifest.json").write_text("{}", encoding="utf-8")
    stale = history / ".tmp-20260102T000000.000000Z-deadbeef"  # left by a SIGKILL
    (stale / "old").mkdir(parents=True)
    (stale / "old" / "x.md").write_text("partial", encoding="utf-8")
    legacy = history / "20251231T000000.000000Z"  # partial, from before snapshots were atomic
    (legacy / "old").mkdir(parents=True)
    (legacy / "old" / "y.md").write_text("kept: it may hold the only copy", encoding="utf-8")
    store = MemoryStore(root)  # opening sweeps temp folders
    assert not stale.exists()
    put(root, "copy.md", document("copy", "c", "user", "body 1"), 0)
    result = run(consolidate_memories(store, force=True))
    assert result.ok and result.history
    names = sorted(p.name for p in history.iterdir())
    assert legacy.name in names  # an incomplete folder is neither counted nor deleted
    counted = [n for n in names if (history / n / "manifest.json").is_file()]
    assert len(counted) == journal.HISTORY_KEEP
    assert counted[-1] == Path(result.history).name and complete[0] not in names
