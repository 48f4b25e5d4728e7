"""MEMORY.md is derived: exact lines, rebuilt on writes, and cheap thanks to the stat cache."""

from __future__ import annotations

import os

from core.memory.index import ScanCache, index_changes, render_index
from core.memory.store import MemoryStore, Record, load_entry
from tests.core.memory.conftest import document


def test_index_lines_are_the_course_format_sorted_by_file(store, root):
    store.write("zeta", "last  one\nwrapped", "user", "b")
    store.write("alpha", "first", "project", "b")
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [alpha](alpha.md) - first\n- [zeta](zeta.md) - last one wrapped\n")


def test_an_empty_store_has_an_empty_index(store, root):
    store.rebuild_index()
    assert (root / "MEMORY.md").read_text() == ""
    assert render_index([]) == ""


def test_the_index_is_never_a_record(store, root):
    store.write("a", "d", "user", "b")
    (root / "MEMORY.md").write_text(document("sneaky", "index posing as a record"))
    assert [r.file for r in store.records()] == ["a.md"]
    assert store.invalid() == []


def test_a_hand_mangled_index_is_rewritten(store, root):
    store.write("a", "d", "user", "b")
    (root / "MEMORY.md").write_text("- [hand written](nowhere.md) - lies\n")
    event = store.rebuild_index("command")
    assert (root / "MEMORY.md").read_text() == "- [a](a.md) - d\n"
    assert event.changed == ("MEMORY.md",)


def test_a_fresh_process_reports_what_changed_against_the_old_index(root):
    MemoryStore(root).write("a", "d", "user", "b")
    (root / "b.md").write_text(document("b", "hand made"))
    event = MemoryStore(root).rebuild_index("command")
    assert event.changed == ("b.md",)


def test_index_changes_names_the_files_whose_lines_differ():
    old = "- [a](a.md) - one\n- [b](b.md) - two\n"
    new = "- [a](a.md) - one\n- [b](b.md) - TWO\n- [c](c.md) - three\n"
    assert index_changes(old, new) == ("b.md", "c.md")
    assert index_changes("garbage\n", "") == ("MEMORY.md",)


def test_an_unchanged_rescan_reads_nothing_and_one_edit_reads_one_file(root):
    root.mkdir()
    for i in range(50):
        (root / f"r{i:02}.md").write_text(document(f"r{i}", f"record {i}"), encoding="utf-8")
    cache = ScanCache(load_entry)
    assert cache.scan(root).reads == 50
    assert cache.scan(root).reads == 0
    path = root / "r07.md"
    path.write_text(document("r7", "edited by hand"), encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    scan = cache.scan(root)
    assert scan.reads == 1
    assert Record("r07.md", "r7", "edited by hand", "user", "body") in scan.records


def test_removed_files_leave_the_cache(root):
    root.mkdir()
    (root / "a.md").write_text(document("a", "d"))
    cache = ScanCache(load_entry)
    assert len(cache.scan(root).records) == 1
    (root / "a.md").unlink()
    scan = cache.scan(root)
    assert scan.records == () and scan.keys == {}


def test_rebuild_does_not_rewrite_an_up_to_date_index(store, root):
    store.write("a", "d", "user", "b")
    before = (root / "MEMORY.md").stat()
    store.rebuild_index("command")
    after = (root / "MEMORY.md").stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
