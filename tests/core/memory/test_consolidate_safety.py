"""Consolidation never deletes a distinct record, never touches what it keeps unchanged,
names every record it removes, never overwrites a concurrent writer's record, and leaves
only complete snapshots in ``.history``."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.events import MemoryConsolidated, MemoryConsolidationFailed
from core.memory import journal
from core.memory.consolidate import consolidate_memories, fact_key
from core.memory.store import MemoryStore
from tests.core.memory.conftest import FakeProvider, document, run, tree_hashes

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


# -- only the same fact is merged -----------------------------------------------------------------


def test_records_sharing_a_description_but_not_a_body_all_stay(root, recorder):
    seed_ports(root)
    result = run(consolidate_memories(MemoryStore(root, recorder), force=True))
    assert result.ok and (result.before, result.after) == (10, 10)
    assert {f"Service {i} listens on port {8000 + i}." for i in range(5)} <= bodies(root)
    assert recorder.of(MemoryConsolidated)[-1].dropped == ()


def test_same_name_different_body_is_not_a_duplicate_offline(root):
    put(root, "tabs.md", document("tabs", "indentation", "user", "Use tabs."), 1)
    put(root, "tabs-2.md", document("Tabs", "indentation", "user", "Use tabs in Makefiles."), 2)
    run(consolidate_memories(MemoryStore(root), force=True))
    assert bodies(root) == {"Use tabs.", "Use tabs in Makefiles."}


def test_the_same_body_up_to_whitespace_is_merged_newest_wins_and_named(root, recorder):
    seed_ports(root)
    put(root, "old-copy.md", document("old copy", "whatever", "project",
                                      "Service 2 listens\n  on port   8002."), 0)
    put(root, "annotated.md", ANNOTATED, 3)
    before = (root / "annotated.md").read_bytes()
    untouched = {p.name: p.read_bytes() for p in root.glob("*.md") if p.name != "old-copy.md"}
    result = run(consolidate_memories(MemoryStore(root, recorder), force=True))
    assert result.ok and (result.before, result.after) == (12, 11)
    assert result.dropped == ("old-copy.md",)
    event = recorder.of(MemoryConsolidated)[-1]
    assert event.dropped == ("old-copy.md",) and (event.before, event.after) == (12, 11)
    assert (root / result.history / "old" / "old-copy.md").exists()
    now = {p.name: p.read_bytes() for p in root.glob("*.md") if p.name != "MEMORY.md"}
    assert now == {k: v for k, v in untouched.items() if k != "MEMORY.md"}
    assert (root / "annotated.md").read_bytes() == before


def test_a_model_run_keeps_what_it_returns_unchanged_byte_for_byte(root, recorder):
    seed_ports(root)
    put(root, "annotated.md", ANNOTATED, 20)
    store = MemoryStore(root, recorder)
    keep = [r for r in store.records() if r.file != "fact-0.md" and r.file != "fact-1.md"]
    answer = [{"name": r.name, "type": r.type, "description": r.description, "body": r.body}
              for r in keep]
    answer.append({"name": "facts 0 and 1", "type": "user", "description": "merged",
                   "body": "body 0; body 1"})
    before = {r.file: (root / r.file).read_bytes() for r in keep}
    result = run(consolidate_memories(store, FakeProvider(json.dumps(answer)), force=True))
    assert result.ok and sorted(result.dropped) == ["fact-0.md", "fact-1.md"]
    assert {f: (root / f).read_bytes() for f in before} == before
    assert recorder.of(MemoryConsolidated)[-1].dropped == result.dropped


def test_a_model_run_keeps_distinct_bodies_that_share_a_description(root):
    seed_ports(root)
    store = MemoryStore(root)
    answer = [{"name": r.name, "type": r.type, "description": "same for all", "body": r.body}
              for r in store.records()]
    answer.append({"name": "copy", "type": "user", "description": "x", "body": "body  0"})
    result = run(consolidate_memories(store, FakeProvider(json.dumps(answer)), force=True))
    assert result.ok and result.after == 10 and result.dropped == ()
    assert len(bodies(root)) == 10


def test_a_record_the_model_rewrites_under_its_name_is_not_dropped(root, recorder):
    seed_ports(root)
    store = MemoryStore(root, recorder)
    answer = [{"name": r.name, "type": r.type, "description": r.description,
               "body": r.body + (" (checked)" if r.file == "fact-0.md" else "")}
              for r in store.records() if r.file != "note-4.md"]
    result = run(consolidate_memories(store, FakeProvider(json.dumps(answer)), force=True))
    assert result.ok and result.dropped == ("note-4.md",)
    assert store.get("fact 0").body == "body 0 (checked)"


# -- names are chosen under the lock --------------------------------------------------------------


def test_a_concurrent_writer_of_the_same_new_name_is_never_overwritten(root, monkeypatch):
    """A second store (its own lock handle) writes "merged notes" in the window between the
    consolidation's planning and its commit; the consolidation's new record must not land
    on that file. The writer runs in a thread released by a barrier just before the
    consolidating store asks for its lock — no sleeps."""
    seed_ports(root)
    store = MemoryStore(root)
    answer = [{"name": "merged notes", "type": "project", "description": "all ports",
               "body": "Services 0-4 listen on ports 8000-8004."}]
    answer += [{"name": f"fact {i}", "type": "user", "description": f"fact {i}",
                "body": f"body {i}"} for i in range(5)]
    release, written = threading.Barrier(2), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            release.wait(timeout=30)
            MemoryStore(root).write("Merged notes", "the writer's own", "project",
                                    "The writer's record must survive.")
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            written.set()

    real_locked = store.locked
    calls = {"n": 0}

    def locked():
        calls["n"] += 1
        if calls["n"] == 1:  # the consolidation's commit: let the writer in first
            release.wait(timeout=30)
            assert written.wait(timeout=30)
        return real_locked()

    monkeypatch.setattr(store, "locked", locked)
    thread = threading.Thread(target=writer)
    thread.start()
    result = run(consolidate_memories(store, FakeProvider(json.dumps(answer)), force=True))
    thread.join(timeout=30)
    assert not errors and calls["n"] >= 1
    assert result.ok, result.reason
    records = {r.name: r for r in MemoryStore(root, read_only=True).records()}
    assert records["Merged notes"].body == "The writer's record must survive."
    assert records["merged notes"].body == "Services 0-4 listen on ports 8000-8004."
    assert records["Merged notes"].file != records["merged notes"].file


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


# -- the invariant, over random stores ------------------------------------------------------------

WORDS = st.sampled_from(["port", "8000", "8001", "tabs", "note", "project", "x"])
TEXT = st.lists(WORDS, min_size=1, max_size=3).map(" ".join)
SPACE = st.sampled_from([" ", "  ", "\n", " \n  "])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.lists(WORDS, min_size=1, max_size=3), SPACE),
                min_size=1, max_size=12))
def test_offline_consolidation_loses_no_distinct_fact_and_accounts_for_every_file(items):
    """Every file is either still there byte-for-byte, or named in ``dropped`` with its
    bytes in the snapshot and its fact still held by a record that stayed."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".memory"
        for i, (name, description, words, space) in enumerate(items):
            put(root, f"r{i}.md", document(f"{name} {i}", description, "user",
                                           space.join(words)), i)
        before = {p.name: p.read_bytes() for p in root.glob("*.md")}
        facts = {fact_key(r.body) for r in MemoryStore(root, read_only=True).records()}
        result = run(consolidate_memories(MemoryStore(root), force=True))
        assert result.ok
        after = {p.name: p.read_bytes() for p in root.glob("*.md") if p.name != "MEMORY.md"}
        assert set(after) | set(result.dropped) == set(before)
        assert not set(after) & set(result.dropped)
        assert all(after[f] == before[f] for f in after)
        for file in result.dropped:
            assert (root / result.history / "old" / file).read_bytes() == before[file]
        kept = [fact_key(r.body) for r in MemoryStore(root, read_only=True).records()]
        assert sorted(kept) == sorted(facts)  # one record per fact, none lost
