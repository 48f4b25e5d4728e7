"""Validation, never deletion: a malformed store is reported, indexed around, and left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.memory.consolidate import consolidate_memories
from core.memory.store import MAX_RECORD_BYTES, MemoryStore
from tests.core.memory.conftest import document, run, tree_hashes

# file → a fragment of the reason it must be reported with
EXPECTED_INVALID = {
    "nofront.md": "no frontmatter",
    "unclosed.md": "not closed",
    "badyaml.md": "bad YAML",
    "notmapping.md": "not a YAML mapping",
    "missing.md": "missing field 'description'",
    "notype.md": "missing field 'type'",
    "unknown.md": "unknown type 'opinion'",
    "listname.md": "field 'name' must be text",
    "emptybody.md": "empty body",
    "binary.md": "binary",
    "latin1.md": "not UTF-8",
    "huge.md": "larger than 1 MB",
    "link-out.md": "symlink pointing outside the store",
    "dangling.md": "broken symlink",
    "traversal.md": "looks like a file path",
    "Memory.md": "reserved",
    "folder.md": "not a regular file",
}
EXPECTED_VALID = {"good.md", "renamed-by-hand.md", "quoted.md", "bom.md"}
EXPECTED_ALIASES = {"link-in.md": "good.md"}  # a link to a record is that record, once


def build_corpus(root: Path, outside: Path) -> None:
    root.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text(document("secret", "outside the store"), encoding="utf-8")
    files = {
        "good.md": document("good", "a valid record"),
        "renamed-by-hand.md": document("original name", "file renamed by a person"),
        "quoted.md": "---\nname: 'key: value # not a comment'\ndescription: \"with --- inside\"\n"
                     "type: feedback\n---\n\nbody\n",
        "nofront.md": "just some notes\n",
        "unclosed.md": "---\nname: x\ndescription: y\ntype: user\n\nbody\n",
        "badyaml.md": "---\nname: [unclosed\ndescription: y\ntype: user\n---\n\nbody\n",
        "notmapping.md": "---\n- a\n- b\n---\n\nbody\n",
        "missing.md": "---\nname: x\ntype: user\n---\n\nbody\n",
        "notype.md": "---\nname: x\ndescription: y\n---\n\nbody\n",
        "unknown.md": document("x", "y", "opinion"),
        "listname.md": "---\nname: [a, b]\ndescription: y\ntype: user\n---\n\nbody\n",
        "emptybody.md": "---\nname: x\ndescription: y\ntype: user\n---\n\n",
        "traversal.md": document("../../etc/passwd", "a name that is a path"),
        "Memory.md": document("case", "a case variant of the index"),
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf" + document("bom", "editor BOM").encode())
    (root / "binary.md").write_bytes(b"---\nname: x\x00\x01\x02\n---\n")
    (root / "latin1.md").write_bytes(document("caf\xe9", "latin-1").encode("latin-1"))
    (root / "huge.md").write_text(document("huge", "big", body="x" * (MAX_RECORD_BYTES + 10)),
                                  encoding="utf-8")
    (root / "link-out.md").symlink_to(outside / "secret.md")
    (root / "link-in.md").symlink_to(root / "good.md")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "folder.md").mkdir()
    for noise in (".good.md.swp", "good.md~", "4913", "notes.txt", ".#good.md", "README"):
        (root / noise).write_text("noise", encoding="utf-8")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / ".memory"
    build_corpus(root, tmp_path / "outside")
    return root


def test_the_corpus_splits_into_valid_and_invalid_with_reasons(corpus):
    store = MemoryStore(corpus, read_only=True)
    assert {r.file for r in store.records()} == EXPECTED_VALID
    assert store.scan().aliases == EXPECTED_ALIASES
    reasons = {f.file: f.reason for f in store.invalid()}
    assert set(reasons) == set(EXPECTED_INVALID)
    for file, fragment in EXPECTED_INVALID.items():
        assert fragment in reasons[file], (file, reasons[file])


def test_a_file_name_need_not_match_its_slug(corpus):
    store = MemoryStore(corpus, read_only=True)
    assert store.get("original name").file == "renamed-by-hand.md"


def test_reading_a_malformed_store_modifies_and_creates_nothing(corpus, tmp_path):
    before = tree_hashes(tmp_path)
    store = MemoryStore(corpus, read_only=True)
    store.records()
    store.invalid()
    store.index_text()
    assert tree_hashes(tmp_path) == before


def test_writable_operations_leave_invalid_files_untouched(corpus, tmp_path):
    skip = ("MEMORY.md", ".lock", ".history")
    before = tree_hashes(corpus, skip=skip)
    outside = tree_hashes(tmp_path / "outside")
    store = MemoryStore(corpus)
    store.rebuild_index()
    new = store.write("nofront", "a slug taken by an invalid file", "user", "b")
    assert new.file == "nofront-2.md"
    run(consolidate_memories(store, None, force=True))
    after = tree_hashes(corpus, skip=skip)
    after.pop(new.file, None)
    for name in EXPECTED_INVALID:
        assert after[name] == before[name], name
    for noise in (".good.md.swp", "good.md~", "4913", "notes.txt", ".#good.md", "README"):
        assert after[noise] == before[noise]
    assert tree_hashes(tmp_path / "outside") == outside


def test_invalid_files_stay_out_of_the_index(corpus):
    store = MemoryStore(corpus)
    event = store.rebuild_index("command")
    index = (corpus / "MEMORY.md").read_text(encoding="utf-8")
    assert event.records == len(EXPECTED_VALID) and event.invalid == len(EXPECTED_INVALID)
    for name in EXPECTED_INVALID:
        assert f"]({name})" not in index
    assert "- [key: value # not a comment](quoted.md) - with --- inside" in index


def test_a_file_that_grows_past_the_limit_later_becomes_invalid(tmp_path):
    root = tmp_path / ".memory"
    store = MemoryStore(root)
    record = store.write("grows", "d", "user", "small")
    with open(root / record.file, "a", encoding="utf-8") as handle:
        handle.write("x" * (MAX_RECORD_BYTES + 1))
    os.utime(root / record.file, ns=(1, 1))
    assert [f.file for f in store.invalid()] == [record.file]
