"""The manifest's index answers exactly what a full parse of the log answers, however the
index and the log got out of step: another process appending, a kill between an append and
its index update (or inside the update), an index deleted, corrupted, built for another log,
ahead of its log, or impossible to write."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.archive.manifest as manifest_module
import core.archive.manifest_sync as manifest_sync
from core.archive.manifest import MANIFEST, Persisted, sha256_text
from core.archive.manifest_index import INDEX, ManifestIndex
from core.archive.store import Archive, earlier_text, wrapper_text

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ".task_outputs/tool-results"
NOT_JSON = f"{MANIFEST}: a line that is not JSON is ignored"
OUTSIDE = f"{MANIFEST}: an entry for a file outside the archive is ignored"
UNKNOWN = f"{MANIFEST}: a line of unknown shape is ignored"
ON_DISK = "import core.archive.manifest_sync as sync\nsync.INDEX_FROM = 0\n"


@pytest.fixture(autouse=True)
def index_on_disk(monkeypatch):
    """These tests are about the index file: every log gets one, however short."""
    monkeypatch.setattr(manifest_sync, "INDEX_FROM", 0)


# -- the reference: what a full parse of the log says ------------------------------------------

def reference(workspace: Path) -> tuple[dict[str, Persisted], dict[str, set[str]], set[str]]:
    """Entries, pointer sets and problems of the whole log, read line by line."""
    data = (workspace / RESULTS / MANIFEST).read_bytes()
    end = data.rfind(b"\n") + 1
    entries: dict[str, Persisted] = {}
    pointers: dict[str, set[str]] = {}
    problems: set[str] = set()
    for line in data[:end].split(b"\n")[:-1]:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            problems.add(NOT_JSON)
            continue
        algorithm = next((a for a in ("blake3", "sha256") if isinstance(obj, dict) and a in obj),
                         None)
        fields = ("path", "tool_use_id", "chars", algorithm, "format")
        types = (str, str, int, str, str)
        if algorithm is not None and all(
                type(obj.get(f)) is t for f, t in zip(fields, types, strict=True)):
            folder, _, name = obj["path"].rpartition("/")
            if folder in (RESULTS, ".transcripts") and name not in ("", ".", ".."):
                entries[obj["path"]] = Persisted(*(obj[f] for f in fields), algorithm)
            else:
                problems.add(OUTSIDE)
        elif isinstance(obj, dict) and type(obj.get("path")) is str \
                and type(obj.get("pointer")) is str:
            pointers.setdefault(obj["path"], set()).add(obj["pointer"])
        else:
            problems.add(UNKNOWN)
    if data[end:]:
        problems.add("torn")
    return entries, pointers, problems


def assert_same_as_full_parse(workspace: Path, paths: set[str] = frozenset()) -> Archive:
    entries, pointers, problems = reference(workspace)
    archive = Archive(workspace)
    found = archive._manifest  # the lookups the archive itself makes
    for path in set(entries) | set(pointers) | set(paths) | {f"{RESULTS}/missing.txt"}:
        assert found.get(path) == entries.get(path), path
        assert found.get(path, others=False) == entries.get(path), path
        assert found.pointers(path) == pointers.get(path, set()), path
    assert found.entries == entries
    reported = {("torn" if "cut off" in p else p) for p in archive.problems}
    assert reported == problems
    return archive


def index_stamp(workspace: Path):
    index = ManifestIndex.open(workspace / RESULTS / INDEX, manifest_module._RULES)
    try:
        return index.stamp()
    finally:
        index.close()


def log_size(workspace: Path) -> int:
    return (workspace / RESULTS / MANIFEST).stat().st_size


def fill(workspace: Path, tag: str, count: int) -> list[str]:
    archive = Archive(workspace)
    rels = [archive.persist(f"toolu_{tag}{i}", f"{tag} result {i} " * 20) for i in range(count)]
    for i, rel in enumerate(rels):
        archive.wrap(rel, f"{tag} result {i}")  # a preview is the start of its file
    archive.flush()
    return rels


class Reads:
    """Which byte ranges of the log the manifest read."""

    def __init__(self, monkeypatch) -> None:
        self.ranges: list[tuple[int, int]] = []
        real = manifest_sync._read_from

        def spy(fd: int, start: int, size: int) -> bytes:
            self.ranges.append((start, size))
            return real(fd, start, size)

        monkeypatch.setattr(manifest_sync, "_read_from", spy)


# -- catching up ---------------------------------------------------------------------------------

APPENDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.archive.store import Archive
    archive = Archive(Path(sys.argv[1]))
    rel = archive.persist("toolu_other", "written by another process")
    archive.wrap(rel, "written")
    archive.flush()
    print(rel)
""")


def run_child(code: str, workspace: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", ON_DISK + code, str(workspace)], cwd=ROOT,
                          env=env,
                          capture_output=True, text=True, timeout=60)


def test_another_process_s_lines_are_found_and_a_reader_reads_only_the_tail(tmp_path,
                                                                            monkeypatch):
    mine = fill(tmp_path, "a", 20)
    reader = Archive(tmp_path)
    assert reader.is_persisted(mine[0])
    theirs = reader.path_for("toolu_other", "written by another process")
    assert reader._manifest.get(theirs) is None
    before = log_size(tmp_path)
    child = run_child(APPENDER, tmp_path)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == theirs
    assert index_stamp(tmp_path).offset == log_size(tmp_path) > before  # it indexed them
    assert reader._manifest.get(theirs, others=False) is None  # as of its last read
    assert reader.is_persisted(theirs)  # a miss looks at what others appended
    reads = Reads(monkeypatch)
    fresh = Archive(tmp_path)
    assert fresh.recover("toolu_other", theirs) == "written by another process"
    assert reads.ranges == [(log_size(tmp_path), 0)]  # nothing of the log read again
    assert_same_as_full_parse(tmp_path)


def test_lines_appended_behind_the_index_s_back_are_read_from_its_offset(tmp_path,
                                                                         monkeypatch):
    fill(tmp_path, "a", 20)
    covered = index_stamp(tmp_path).offset
    log = tmp_path / RESULTS / MANIFEST
    other = tmp_path / RESULTS / "x.txt"
    other.write_text("x")
    with open(log, "ab") as fh:  # as a ctxlab from before the index would append
        fh.write(json.dumps({"path": f"{RESULTS}/x.txt", "tool_use_id": "t", "chars": 1,
                             "sha256": sha256_text("x"), "format": "text"}).encode() + b"\n")
    reads = Reads(monkeypatch)
    assert Archive(tmp_path).is_persisted(f"{RESULTS}/x.txt")
    assert reads.ranges == [(covered, log_size(tmp_path) - covered)]
    assert index_stamp(tmp_path).offset == log_size(tmp_path)  # caught up, for the next one
    assert_same_as_full_parse(tmp_path)


def test_an_append_never_loads_the_whole_log(tmp_path, monkeypatch):
    fill(tmp_path, "a", 20)
    reads = Reads(monkeypatch)
    archive = Archive(tmp_path)
    archive.persist("toolu_new", "new")
    archive.flush()
    assert all(start > 0 for start, _ in reads.ranges)
    assert index_stamp(tmp_path).offset == log_size(tmp_path)
    assert_same_as_full_parse(tmp_path)


# -- rebuilt from the log ------------------------------------------------------------------------

def test_a_deleted_index_is_rebuilt_silently(tmp_path):
    fill(tmp_path, "a", 10)
    (tmp_path / RESULTS / INDEX).unlink()
    archive = assert_same_as_full_parse(tmp_path)
    assert archive.problems == []
    assert index_stamp(tmp_path).offset == log_size(tmp_path)


def test_a_corrupt_index_is_rebuilt_silently(tmp_path):
    rels = fill(tmp_path, "a", 10)
    index = tmp_path / RESULTS / INDEX
    for garbage in (os.urandom(8192), index.read_bytes()[:1500], b""):
        index.write_bytes(garbage)
        archive = assert_same_as_full_parse(tmp_path)
        assert archive.problems == []
        assert archive.trusted_pointer("toolu_a3", wrapper_text(rels[3], "a result 3")) == rels[3]
        assert index_stamp(tmp_path).offset == log_size(tmp_path)


def test_an_index_corrupted_while_in_use_is_rebuilt(tmp_path):
    rels = fill(tmp_path, "a", 10)
    archive = Archive(tmp_path)
    assert archive.is_persisted(rels[0])
    (tmp_path / RESULTS / INDEX).write_bytes(os.urandom(8192))
    assert archive.is_persisted(rels[1]) and archive.manifest().keys() == set(rels)
    assert archive.problems == []


def test_an_index_damaged_inside_is_rebuilt_on_disk(tmp_path):
    rels = fill(tmp_path, "a", 300)
    index = tmp_path / RESULTS / INDEX
    data = bytearray(index.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[2 * page:len(data) - page] = os.urandom(len(data) - 3 * page)  # the header is fine
    index.write_bytes(bytes(data))
    archive = Archive(tmp_path)
    assert set(archive.manifest()) == set(rels) and archive.problems == []
    assert_same_as_full_parse(tmp_path)
    db = sqlite3.connect(index)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


def test_an_index_of_a_replaced_log_is_rebuilt(tmp_path):
    fill(tmp_path, "a", 5)
    other = tmp_path / "other"
    theirs = fill(other, "b", 12)  # a different, longer log
    log = tmp_path / RESULTS / MANIFEST
    for rel in theirs:
        shutil.copy(other / rel, tmp_path / rel)
    log.write_bytes((other / RESULTS / MANIFEST).read_bytes())  # in place: the same inode
    archive = assert_same_as_full_parse(tmp_path)
    assert set(archive.manifest()) == set(theirs)
    assert archive.problems == []


def test_an_index_of_a_log_renamed_over_it_is_rebuilt(tmp_path):
    rels = fill(tmp_path, "a", 60)
    log = tmp_path / RESULTS / MANIFEST
    data = log.read_bytes()
    assert len(data) > 3 * 4096
    old, new = b'"tool_use_id": "toolu_a30"', b'"tool_use_id": "toolu_X30"'
    assert data.count(old) == 1  # same length, same start, same end: only the inode differs
    (tmp_path / "new").write_bytes(data.replace(old, new))
    os.replace(tmp_path / "new", log)
    archive = assert_same_as_full_parse(tmp_path)
    assert archive.manifest()[rels[30]].tool_use_id == "toolu_X30"


def test_an_index_of_a_log_whose_last_lines_were_rewritten_in_place_is_rebuilt(tmp_path):
    rels = fill(tmp_path, "a", 60)
    log = tmp_path / RESULTS / MANIFEST
    data = log.read_bytes()
    last = json.loads(data.splitlines()[-1])
    assert last["path"] == rels[-1]
    assert data.endswith(f'"{last["pointer"]}"}}\n'.encode())
    changed = data[:-68] + b'"' + b"f" * 64 + b'"}\n'  # the same start, the same inode
    with open(log, "r+b") as fh:  # rewritten in place, and grown
        fh.write(changed + _line_for(rels[0], "toolu_later"))
    archive = assert_same_as_full_parse(tmp_path)
    assert "f" * 64 in archive._manifest.pointers(rels[-1])


def _line_for(rel: str, tool_use_id: str) -> bytes:
    return json.dumps({"path": rel, "tool_use_id": tool_use_id, "chars": 1,
                       "sha256": "0" * 64, "format": "text"}).encode() + b"\n"


def test_a_known_path_s_newer_line_is_seen_once_the_log_is_read_again(tmp_path):
    rels = fill(tmp_path, "a", 3)
    reader = Archive(tmp_path)
    assert reader.manifest_entry(rels[0]).tool_use_id == "toolu_a0"
    with open(tmp_path / RESULTS / MANIFEST, "ab") as fh:
        fh.write(_line_for(rels[0], "toolu_newer"))
    assert not reader.is_persisted(f"{RESULTS}/missing.txt")  # a miss reads the log's end
    assert reader.manifest_entry(rels[0]).tool_use_id == "toolu_newer"


def test_a_known_path_s_line_another_process_indexed_is_seen_after_a_catch_up(tmp_path):
    rels = fill(tmp_path, "a", 3)
    reader = Archive(tmp_path)
    assert reader.manifest_entry(rels[1]).tool_use_id == "toolu_a1"
    with open(tmp_path / RESULTS / MANIFEST, "ab") as fh:
        fh.write(_line_for(rels[1], "toolu_newer"))
    assert Archive(tmp_path).manifest_entry(rels[1]).tool_use_id == "toolu_newer"  # indexed
    assert not reader.is_persisted(f"{RESULTS}/missing.txt")
    assert reader.manifest_entry(rels[1]).tool_use_id == "toolu_newer"


def test_an_index_ahead_of_its_log_is_rebuilt(tmp_path):
    fill(tmp_path, "a", 3)
    log = tmp_path / RESULTS / MANIFEST
    older = log.read_bytes()
    later = fill(tmp_path, "b", 3)
    log.write_bytes(older)  # the log restored from before the index saw more
    archive = assert_same_as_full_parse(tmp_path)
    assert not set(later) & set(archive.manifest())
    assert index_stamp(tmp_path).offset == len(older)


def test_an_index_built_by_other_rules_is_rebuilt(tmp_path, monkeypatch):
    fill(tmp_path, "a", 3)
    monkeypatch.setattr(manifest_module, "_RULES", "other rules")
    reads = Reads(monkeypatch)
    assert_same_as_full_parse(tmp_path)
    assert reads.ranges[0] == (0, log_size(tmp_path))


def test_without_a_writable_index_the_log_is_read_whole_in_memory(tmp_path):
    rels = fill(tmp_path, "a", 3)
    index = tmp_path / RESULTS / INDEX
    index.unlink()
    index.mkdir()  # a path sqlite cannot open as a database
    archive = assert_same_as_full_parse(tmp_path)
    assert archive.problems == []
    more = archive.persist("toolu_more", "more")
    archive.flush()
    assert set(Archive(tmp_path).manifest()) == {*rels, more}


def test_a_forged_index_row_outside_the_archive_is_not_trusted(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("user code")
    fill(tmp_path, "a", 1)
    line = json.dumps({"path": "src/app.py", "tool_use_id": "t1", "chars": 9,
                       "sha256": sha256_text("user code"), "format": "text"})
    db = sqlite3.connect(tmp_path / RESULTS / INDEX)
    db.execute("INSERT INTO entries VALUES (?, ?)", (b"src/app.py", line.encode()))
    db.commit()
    db.close()
    archive = Archive(tmp_path)
    assert archive.trusted_pointer("t1", earlier_text("src/app.py")) is None
    assert "src/app.py" not in archive._manifest.entries


# -- torn lines and kills --------------------------------------------------------------------------

def test_a_torn_last_line_with_an_index_present(tmp_path):
    kept = fill(tmp_path, "a", 4)
    log = tmp_path / RESULTS / MANIFEST
    with open(log, "ab") as fh:
        fh.write(b'{"path": ".task_outputs/tool-results/x.txt", "tool_u')  # killed here
    events = []
    reopened = Archive(tmp_path, emit=events.append)
    assert set(kept) <= set(reopened.manifest())
    assert [e.kind for e in events] == ["archive"] and "cut off" in events[0].message
    assert_same_as_full_parse(tmp_path)  # and still reported by the next one
    later = reopened.persist("toolu_later", "later")
    reopened.flush()
    third = assert_same_as_full_parse(tmp_path)  # the torn line is now a line of its own
    assert third.recover("toolu_later", later) == "later"
    assert NOT_JSON in third.problems


KILLED_AFTER_APPEND = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from core.archive.store import Archive
    from core.archive.manifest_index import ManifestIndex
    archive = Archive(Path(sys.argv[1]))
    archive.persist("toolu_first", "first")
    archive.flush()
    def killed(*args, **kwargs):  # the log has the new lines; the index is not updated
        os.kill(os.getpid(), signal.SIGKILL)
    ManifestIndex.apply = killed
    archive.persist("toolu_second", "second")
    archive.flush()
""")

KILLED_INSIDE_UPDATE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from core.archive.store import Archive
    archive = Archive(Path(sys.argv[1]))
    archive.persist("toolu_first", "first")
    archive.flush()
    def trace(statement):  # rows written, the transaction not committed
        if statement.startswith("INSERT OR REPLACE INTO meta"):
            os.kill(os.getpid(), signal.SIGKILL)
    archive._manifest._log.index.conn.set_trace_callback(trace)
    archive.persist("toolu_second", "second")
    archive.flush()
""")


def test_a_kill_between_an_append_and_its_index_update_means_the_next_reader_catches_up(
        tmp_path):
    child = run_child(KILLED_AFTER_APPEND, tmp_path)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert index_stamp(tmp_path).offset < log_size(tmp_path)  # the index is behind
    archive = assert_same_as_full_parse(tmp_path)
    assert archive.problems == []
    assert {e.tool_use_id for e in archive.manifest().values()} == {"toolu_first",
                                                                  "toolu_second"}
    assert index_stamp(tmp_path).offset == log_size(tmp_path)


def test_a_kill_inside_an_index_update_is_rolled_back_and_caught_up(tmp_path):
    child = run_child(KILLED_INSIDE_UPDATE, tmp_path)
    assert child.returncode == -signal.SIGKILL, child.stderr
    journal = tmp_path / RESULTS / f"{INDEX}-journal"
    assert journal.exists()  # the kill landed inside the transaction
    archive = assert_same_as_full_parse(tmp_path)
    assert archive.problems == []
    assert len(archive.manifest()) == 2
    assert not journal.exists() or journal.stat().st_size == 0  # rolled back
    assert index_stamp(tmp_path).offset == log_size(tmp_path)


# -- lookups through the index equal a full parse, whatever the log holds and whenever read -------

PATHS = [f"{RESULTS}/toolu_{i}.txt" for i in range(4)] + ["src/app.py", f"{RESULTS}/é\u2028.txt"]


def _entry_line(path: str, n: int) -> bytes:
    algorithm = "blake3" if n % 2 else "sha256"  # lines of today and of an older ctxlab
    return json.dumps({"path": path, "tool_use_id": f"t{n}", "chars": n, algorithm: f"{n:064x}",
                       "format": "text"}, ensure_ascii=False).encode()


LINES = st.one_of(
    st.builds(_entry_line, st.sampled_from(PATHS), st.integers(0, 9)),
    st.builds(lambda p, d: json.dumps({"path": p, "pointer": d}).encode(),
              st.sampled_from(PATHS), st.sampled_from(["d1", "d2", "d3"])),
    st.builds(lambda p: json.dumps({"path": p, "pointer": "d9", "extra": 1}).encode(),
              st.sampled_from(PATHS)),
    st.builds(lambda p: json.dumps({"path": p, "sha256": "x"}).encode(),
              st.sampled_from(PATHS)),  # an entry missing fields: unknown shape
    st.sampled_from([b"", b"   ", b"not json", b"[1, 2]", b'{"path": 1, "pointer": "d"}']),
)
# Each step appends some lines (the last one maybe only in part, finished by the next step),
# then maybe opens an archive and looks something up, which catches the index up.
STEPS = st.lists(st.tuples(st.lists(LINES, max_size=6), st.integers(0, 20), st.booleans()),
                 min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(steps=STEPS, torn=st.booleans())
def test_lookups_through_the_index_equal_a_full_parse_of_the_log(tmp_path_factory, steps,
                                                                 torn):
    workspace = tmp_path_factory.mktemp("ws")
    folder = workspace / RESULTS
    folder.mkdir(parents=True)
    log = folder / MANIFEST
    carry = b""
    for lines, cut, look in steps:
        data = carry + b"".join(line + b"\n" for line in lines)
        cut = min(cut, len(data)) if lines else 0
        carry = data[len(data) - cut:] if cut else b""
        with open(log, "ab") as fh:
            fh.write(data[:len(data) - cut])
        if look:
            Archive(workspace).is_persisted(PATHS[0])
    with open(log, "ab") as fh:
        fh.write(carry + (b'{"path": "torn' if torn else b""))  # finished, maybe a torn one
    assert_same_as_full_parse(workspace, set(PATHS))


# -- a short log is indexed in memory ---------------------------------------------------------


def test_a_short_log_gets_no_index_file_until_it_grows(tmp_path, monkeypatch):
    monkeypatch.setattr(manifest_sync, "INDEX_FROM", 4_000)
    archive = Archive(tmp_path)
    first = archive.persist("toolu_0", "a short result " * 20)
    archive.flush()
    index = tmp_path / RESULTS / INDEX
    assert not index.exists()
    assert Archive(tmp_path).trusted_pointer("toolu_0", earlier_text(first)) == first
    for n in range(1, 40):  # about 200 bytes of log each
        archive.persist(f"toolu_{n}", f"result {n} " * 20)
        archive.flush()
    assert index.exists()  # past the threshold: on disk, and answering
    assert_same_as_full_parse(tmp_path)


def test_an_index_file_another_process_made_is_used_for_a_short_log(tmp_path, monkeypatch):
    archive = Archive(tmp_path)  # INDEX_FROM = 0 here: this one makes the file
    rel = archive.persist("toolu_0", "a short result " * 20)
    archive.flush()
    monkeypatch.setattr(manifest_sync, "INDEX_FROM", 1 << 30)
    reader = Archive(tmp_path)
    assert reader.trusted_pointer("toolu_0", earlier_text(rel)) == rel
    assert reader._manifest._log.index.path is not None  # the file, not memory
