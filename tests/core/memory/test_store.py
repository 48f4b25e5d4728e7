"""The record format, slugs, path guards, writes, atomicity and the cross-process lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from filelock import FileLock
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.events import IndexRebuilt, MemoryWritten
from core.memory.store import (
    LOCK_NAME,
    MemoryStore,
    MemoryStoreError,
    load_entry,
    parse_document,
    path_like_reason,
    record_from_text,
    render_document,
    slugify,
)
from tests.core.memory.conftest import document, wait_for

REPO = Path(__file__).resolve().parents[3]
AWKWARD = ["---", "a\n---\nb", "key: value # not a comment", "'single' \"double\"", "用户偏好 Tabs",
           "emoji 🎉🧠", "- [x](y.md) - z", "\x85 next line", "line\u2028sep", "  padded  ",
           "tab\there", "null", "yes", "123", "[1, 2]", "{a: b}", "&anchor *ref", "!!python/none",
           "%TAG", "... end", "\ufeffbom", "back\\slash"]

values = st.text(alphabet=st.characters(codec="utf-8"), min_size=1).filter(str.strip)


def test_document_layout_is_the_course_layout():
    text = render_document("tabs", "User prefers tabs", "user", "  Use tabs.  \n")
    assert text == "---\nname: tabs\ndescription: User prefers tabs\ntype: user\n---\n\nUse tabs.\n"
    quoted = render_document("key: value # not a comment", "d", "project", "b")
    assert "name: 'key: value # not a comment'" in quoted


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=values, description=values, body=values)
@example(name="---", description="desc with --- inside", body="---\nnot a fence inside\n---")
@example(name="a\n---\nb", description=": #", body="x")
@example(name="\x85", description="\u2028", body="🎉")
def test_any_value_round_trips_through_the_document(name, description, body):
    meta, parsed_body = parse_document(render_document(name, description, "feedback", body))
    assert meta == {"name": name, "description": description, "type": "feedback"}
    assert parsed_body == body.strip()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(name=values.filter(lambda s: path_like_reason(s) is None),
       description=values, body=values.filter(lambda s: "\x00" not in s))
def test_written_records_read_back_identically(tmp_path_factory, name, description, body):
    store = MemoryStore(tmp_path_factory.mktemp("rt") / ".memory")
    written = store.write(name, description, "project", body)
    (again,) = store.records()
    assert again == written
    assert (again.name, again.description, again.body) == (name, description, body.strip())


@pytest.mark.parametrize("value", AWKWARD)
def test_awkward_values_round_trip_on_disk(store, value):
    record = store.write(value, value, "reference", value)
    assert store.records() == [record]
    assert record.name == value and record.description == value


def test_crlf_files_written_by_an_editor_are_read():
    text = "---\r\nname: tabs\r\ndescription: d\r\ntype: user\r\n---\r\n\r\nbody\r\n"
    record = record_from_text("tabs.md", text)
    assert (record.name, record.description, record.body) == ("tabs", "d", "body")


@pytest.mark.parametrize(("name", "slug"), [
    ("../../etc/passwd", "etc-passwd"), ("!!!", "memory"), ("MEMORY", "memory"),
    ("用户偏好 Tabs", "用户偏好-tabs"), ("tabs_preference", "tabs_preference"),
    ("Tabs Preference", "tabs-preference"), ("x" * 300, "x" * 100),
])
def test_slug_rule_is_the_courses(name, slug):
    assert slugify(name) == slug


def test_writing_the_same_name_updates_that_record(store, root):
    first = store.write("tabs", "User prefers tabs", "user", "one")
    second = store.write("tabs", "User prefers tabs", "user", "two")
    assert first.file == second.file == "tabs.md"
    assert [r.body for r in store.records()] == ["two"]


def test_a_hand_renamed_record_is_updated_where_it_lives(store, root):
    root.mkdir()
    (root / "my notes.md").write_text(document("tabs", "old"), encoding="utf-8")
    record = store.write("tabs", "new", "user", "b")
    assert record.file == "my notes.md"
    assert not (root / "tabs.md").exists()


def test_colliding_slugs_get_distinct_files(store, root):
    a = store.write("Tabs!", "a", "user", "a")
    b = store.write("tabs?", "b", "user", "b")
    c = store.write("TABS", "c", "user", "c")
    assert (a.file, b.file, c.file) == ("tabs.md", "tabs-2.md", "tabs-3.md")
    assert {r.name for r in store.records()} == {"Tabs!", "tabs?", "TABS"}


def test_a_slug_taken_by_an_invalid_file_is_not_overwritten(store, root):
    root.mkdir()
    (root / "notes.md").write_bytes(b"no frontmatter here")
    record = store.write("notes", "d", "project", "b")
    assert record.file == "notes-2.md"
    assert (root / "notes.md").read_bytes() == b"no frontmatter here"


def test_a_slug_differing_only_in_case_is_taken(store, root):
    root.mkdir()
    (root / "Tabs.md").write_text(document("Other", "x"), encoding="utf-8")
    assert store.write("tabs", "d", "user", "b").file == "tabs-2.md"


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "~/notes", "..", "./x",
                                  "C:\\Users\\me", "src/../main.py", "docs/notes.md", "a\\b.txt",
                                  "/x.md", "\\\\server\\share", "~"])
def test_names_that_are_paths_are_refused(store, name):
    with pytest.raises(MemoryStoreError, match="path"):
        store.write(name, "d", "user", "b")
    assert not store.root.exists() or store.records() == []


@pytest.mark.parametrize("name", ["TCP/IP setup", "CI/CD", "and/or", "v1.2 notes", "...wait",
                                  "~0", "~approx", "/compact usage", "1/2 cup"])
def test_titles_with_a_slash_or_dots_are_not_paths(store, name):
    assert store.write(name, "d", "user", "b").name == name


@pytest.mark.parametrize(("field", "value"), [("name", " "), ("description", ""), ("body", "\n")])
def test_empty_fields_are_refused(store, field, value):
    fields = {"name": "n", "description": "d", "body": "b"} | {field: value}
    with pytest.raises(MemoryStoreError, match=field):
        store.write(fields["name"], fields["description"], "user", fields["body"])


def test_unknown_type_is_refused(store):
    with pytest.raises(MemoryStoreError, match="unknown memory type"):
        store.write("n", "d", "opinion", "b")


@pytest.mark.parametrize("file", ["../x.md", "a/b.md", "MEMORY.md", "memory.MD", ".hidden.md",
                                  "notes.txt", "", ".."])
def test_delete_refuses_anything_but_a_record_file(store, file):
    store.write("keep", "d", "user", "b")
    with pytest.raises(MemoryStoreError):
        store.delete(file)
    assert [r.name for r in store.records()] == ["keep"]


def test_delete_refuses_a_symlink_out_of_the_store(store, root, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text(document("x", "y"), encoding="utf-8")
    root.mkdir()
    (root / "leak.md").symlink_to(outside)
    with pytest.raises(MemoryStoreError, match="outside"):
        store.delete("leak.md")
    assert outside.exists() and (root / "leak.md").is_symlink()


def test_delete_removes_the_record_and_reindexes(store, root):
    record = store.write("tabs", "d", "user", "b")
    assert store.delete(record.file) is True
    assert store.delete(record.file) is False
    assert store.records() == [] and (root / "MEMORY.md").read_text() == ""


def test_write_emits_written_then_index_events(store, recorder):
    store.write("tabs", "d", "feedback", "b")
    written, rebuilt = recorder.events
    assert isinstance(written, MemoryWritten) and written.record_type == "feedback"
    assert isinstance(rebuilt, IndexRebuilt) and rebuilt.trigger == "write"
    assert rebuilt.changed == ("tabs.md",) and rebuilt.records == 1


def test_writes_leave_no_temp_files(store, root):
    for i in range(5):
        store.write(f"r{i}", "d", "user", "b")
    assert sorted(p.name for p in root.iterdir()) == [
        LOCK_NAME, "MEMORY.md", "r0.md", "r1.md", "r2.md", "r3.md", "r4.md"]


def test_read_only_store_creates_nothing(tmp_path):
    root = tmp_path / ".memory"
    store = MemoryStore(root, read_only=True)
    assert store.records() == [] and not root.exists()
    with pytest.raises(MemoryStoreError, match="read-only"):
        store.write("n", "d", "user", "b")
    assert not root.exists()


def test_a_fifo_is_reported_without_blocking(root):
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    entry = load_entry(root, "pipe.md")
    assert entry.reason == "not a regular file"


def test_threads_writing_at_once_lose_nothing(store, root):
    def writer(k: int) -> None:
        for i in range(10):
            store.write(f"t{k}-{i}", f"desc {k} {i}", "user", "b")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.records()) == 40
    assert len((root / "MEMORY.md").read_text().splitlines()) == 40


WRITER = textwrap.dedent("""
    import sys
    from core.memory.store import MemoryStore
    store = MemoryStore(sys.argv[1])
    for i in range(int(sys.argv[3])):
        store.write(f"{sys.argv[2]}-{i}", f"from {sys.argv[2]} {i}", "project", "body")
""")


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_two_processes_writing_at_once_lose_nothing(store, root):
    store.write("seed", "seed", "user", "b")
    procs = [_spawn(str(root), tag, "15") for tag in ("a", "b")]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    assert len(store.records()) == 31
    index = (root / "MEMORY.md").read_text().splitlines()
    assert len(index) == 31 and store.invalid() == []


def test_a_writer_waits_for_the_cross_process_lock(store, root):
    store.write("seed", "seed", "user", "b")
    lock = FileLock(str(root / LOCK_NAME))
    with lock:
        proc = _spawn(str(root), "late", "1")
        try:
            proc.wait(timeout=0.7)
        except subprocess.TimeoutExpired:
            pass
        assert proc.poll() is None and not (root / "late-0.md").exists()
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    wait_for(lambda: (root / "late-0.md").exists())


@pytest.mark.parametrize("field", ["name", "description", "type", "body"])
@pytest.mark.parametrize("value", [None, 42, True, ["a"]])
def test_non_text_fields_are_refused_never_stringified(store, root, field, value):
    fields = {"name": "tabs", "description": "d", "type": "user", "body": "b"}
    with pytest.raises(MemoryStoreError, match=f"memory {field} must be text"):
        store.write(**{**fields, field: value})
    assert not list(root.glob("*.md"))
