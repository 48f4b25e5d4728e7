"""The archive holds against sharing, forgery and tampering (issue 11, data loss 1-3).

Each test reproduces a way an earlier archive lost a result: two processes overwriting each
other's files and manifest entries, a wrapper-shaped output trusted by its first line and a
size, an archived file changed behind ctxlab's back still pointed at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.archive.content_hash import digest_text
from core.archive.manifest import LEGACY_MANIFEST, MANIFEST, sha256_text
from core.archive.store import (
    Archive,
    ArchiveChanged,
    earlier_text,
    pointer_path,
    wrapper_text,
)
from core.compact.context import StageRun
from core.compact.micro import micro_compact
from core.compact.stages import MICRO_COMPACT
from core.measure import Measured
from tests.core.compact.builders import assistant, make, prepare, result, results, use

ROOT = Path(__file__).resolve().parents[3]
RESULTS = Path(".task_outputs/tool-results")


def seen(*blocks):
    ids = [b["tool_use_id"] for b in blocks]
    return [assistant(*(use(i) for i in ids)), results(*blocks),
            {"role": "assistant", "content": "ok"}]


def errors(rec, kind="archive"):
    return [e for e in rec.events if e.type == "error" and e.kind == kind]


# -- 1. two processes on one workspace ----------------------------------------------------------

WRITER = textwrap.dedent("""
    import asyncio, json, sys, time
    from pathlib import Path
    from core.compact.pipeline import Compactor
    from core.config import Thresholds

    work, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    time.sleep(max(float(sys.argv[4]) - time.time(), 0))  # both start together
    out = []
    for r in range(rounds):
        comp = Compactor(work, Thresholds(keep_recent=0, context_limit=2_000,
                                          max_messages=10**6))
        ids = [f"toolu_{i}" for i in range(4)]
        body = {i: f"{tag} round {r} {i} " + tag * 900 for i in ids}
        history = [{"role": "user", "content": "go"},
                   {"role": "assistant", "content": [
                       {"type": "tool_use", "id": i, "name": "bash", "input": {}} for i in ids]},
                   {"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": i, "content": body[i]}
                       for i in ids]},
                   {"role": "assistant", "content": "done"},
                   {"role": "user", "content": "next"}]
        asyncio.run(comp.prepare(history, "go"))
        for entry in comp.ledger:
            out.append([entry["tool_use_id"], entry["where"], body[entry["tool_use_id"]]])
    print(json.dumps(out))
""")


def test_1_two_processes_reusing_ids_each_recover_their_own_bytes(tmp_path):
    """Two concurrent runs on one workdir, same tool_use ids, different contents."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = str(time.time() + 2.0)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag, "25", start],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
             for tag in ("A", "B")]
    outputs = [json.loads(p.communicate(timeout=240)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    archive = Archive(tmp_path)
    manifest = archive.manifest()
    for ledger in outputs:
        assert len(ledger) == 25 * 4
        for tool_use_id, where, body in ledger:
            assert archive.recover(tool_use_id, where) == body  # its own bytes
            assert manifest[where].digest == digest_text(body)  # no entry lost
    assert archive.problems == []


def test_1_a_result_name_is_never_shared_by_two_contents(tmp_path):
    first, second = Archive(tmp_path), Archive(tmp_path)  # two processes' views
    a = first.persist("call_1", "first run")
    b = second.persist("call_1", "second run")
    first.flush()
    second.flush()
    assert a != b
    assert (tmp_path / a).read_text() == "first run"
    assert (tmp_path / b).read_text() == "second run"
    assert set(Archive(tmp_path).manifest()) == {a, b}


# -- 2. only the exact text ctxlab wrote is a pointer -------------------------------------------

def test_2_a_wrapper_followed_by_new_data_is_content(tmp_path):
    comp, _ = make(tmp_path, keep_recent=0, batch_limit=1_000)
    wrapped = prepare(comp, [assistant(use("t1")), results(result("t1", "old " * 10_000))])
    wrapper = wrapped[1]["content"][0]["content"]
    assert pointer_path(wrapper) is not None
    fresh = wrapper + "\n" + "NEW DATA " * 500  # a later result with the same id
    h = Measured(seen(result("t1", fresh)))
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    where = comp.ledger[-1]["where"]
    assert where != pointer_path(wrapper)
    assert comp.archive.recover("t1", where) == fresh


def test_2_a_rewritten_wrapper_naming_a_real_file_is_content(tmp_path):
    comp, _ = make(tmp_path, keep_recent=0, batch_limit=1_000)
    wrapped = prepare(comp, [assistant(use("t1")), results(result("t1", "old " * 10_000))])
    wrapper = wrapped[1]["content"][0]["content"]
    forged = wrapper.replace("old old", "new new", 1)  # same shape and size, other data
    h = Measured(seen(result("t1", forged)))
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    assert comp.archive.recover("t1", comp.ledger[-1]["where"]) == forged


def test_2_a_file_changed_to_the_same_size_is_not_trusted(tmp_path):
    comp, rec = make(tmp_path, keep_recent=0, batch_limit=1_000)
    wrapped = prepare(comp, [assistant(use("t1")), results(result("t1", "old " * 10_000))])
    wrapper = wrapped[1]["content"][0]["content"]
    file = tmp_path / pointer_path(wrapper)
    file.write_text("bad " * 10_000)  # same size, other bytes
    assert comp.archive.trusted_pointer("t1", wrapper) is None
    assert errors(rec)


# -- 3. a changed archive file is detected, reported, never pointed at --------------------------

def test_3_a_changed_result_file_is_reported_and_never_pointed_at(tmp_path):
    comp, rec = make(tmp_path, keep_recent=0, batch_limit=1_000)
    wrapped = prepare(comp, [assistant(use("t1")), results(result("t1", "R" * 40_000))])
    wrapper = wrapped[1]["content"][0]["content"]
    path = pointer_path(wrapper)
    (tmp_path / path).write_text("overwritten by a tool")
    h = Measured([*wrapped, {"role": "assistant", "content": "ok"}])
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    assert h.messages[1]["content"][0]["content"] == wrapper  # no new pointer to it
    assert earlier_text(path) not in json.dumps(h.messages)
    (error,) = errors(rec)
    assert path in error.message
    assert [e.path for e in rec.events if e.type == "pointer_broken"] == [path]
    assert comp.ledger[-1]["status"] == "broken"


def test_3_recovering_from_a_changed_file_raises_and_reports(tmp_path):
    archive_events = []
    archive = Archive(tmp_path, emit=archive_events.append)
    rel = archive.persist("t1", "original bytes")
    archive.flush()
    (tmp_path / rel).write_text("original bytez")
    with pytest.raises(ArchiveChanged):
        archive.recover("t1", rel)
    fresh = Archive(tmp_path)  # another process, later
    with pytest.raises(ArchiveChanged):
        fresh.read_result(rel)
    assert [e.kind for e in archive_events] == ["archive"]
    assert fresh.problems


def test_3_a_changed_transcript_is_reported_on_recover(tmp_path):
    events = []
    archive = Archive(tmp_path, emit=events.append)
    rel = archive.write_transcript([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "kept"}]}])
    archive.flush()
    assert archive.recover("t1", rel) == "kept"
    (tmp_path / rel).write_text(json.dumps({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "swapped"}]}) + "\n")
    with pytest.raises(ArchiveChanged):
        Archive(tmp_path, emit=events.append).recover("t1", rel)
    assert events and events[-1].kind == "archive"


# -- 5. the manifest is a log: appended, never rewritten; a torn line is tolerated --------------

def test_5_the_manifest_is_appended_never_rewritten(tmp_path):
    archive = Archive(tmp_path)
    archive.persist("t1", "one")
    archive.flush()
    log = tmp_path / RESULTS / MANIFEST
    before = log.read_bytes()
    inode = log.stat().st_ino
    archive.persist("t2", "two")
    archive.flush()
    after = log.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert log.stat().st_ino == inode  # the same file, grown: not replaced
    assert all(json.loads(line) for line in after.decode().splitlines())


def test_5_a_torn_last_line_is_tolerated_and_reported(tmp_path):
    archive = Archive(tmp_path)
    kept = archive.persist("t1", "kept")
    archive.flush()
    log = tmp_path / RESULTS / MANIFEST
    with open(log, "ab") as fh:
        fh.write(b'{"path": ".task_outputs/tool-results/x.txt", "tool_u')  # killed here
    events = []
    reopened = Archive(tmp_path, emit=events.append)
    assert kept in reopened.manifest()
    assert [e.kind for e in events] == ["archive"] and "cut off" in events[0].message
    later = reopened.persist("t2", "later")
    reopened.flush()
    third = Archive(tmp_path)
    assert {kept, later} <= set(third.manifest())
    assert third.recover("t2", later) == "later"


def test_5_opening_an_archive_reads_no_manifest_until_needed(tmp_path, monkeypatch):
    archive = Archive(tmp_path)
    archive.persist("t1", "x" * 200)
    archive.flush()
    import core.archive.manifest_sync as manifest_sync

    def refuse(*_):
        raise AssertionError("read at open")

    monkeypatch.setattr(manifest_sync.IndexedLog, "read_tail", refuse)
    Archive(tmp_path)  # no read of the log at all


def test_5_an_old_manifest_json_is_still_read(tmp_path):
    folder = tmp_path / RESULTS
    folder.mkdir(parents=True)
    rel = f"{RESULTS.as_posix()}/toolu_01-7a95b703.txt"
    text = "legacy result " * 200
    (tmp_path / rel).write_text(text)
    (folder / LEGACY_MANIFEST).write_text(json.dumps({"files": {rel: {
        "path": rel, "tool_use_id": "toolu_01", "chars": len(text),
        "sha256": sha256_text(text), "format": "text"}}}))
    archive = Archive(tmp_path)
    wrapper = wrapper_text(rel, text[:2000])
    assert archive.trusted_pointer("toolu_01", wrapper) == rel
    assert archive.trusted_pointer("toolu_01", earlier_text(rel)) == rel
    assert archive.trusted_pointer("toolu_01", wrapper + "more") is None
    forged = wrapper.replace("legacy", "LEGACY", 1)
    assert archive.trusted_pointer("toolu_01", forged) is None
    assert archive.recover("toolu_01", rel) == text
    archive.persist("t2", "new")
    archive.flush()
    assert (folder / MANIFEST).is_file()
    assert set(Archive(tmp_path).manifest()) >= {rel}


def test_a_transcript_is_listed_but_is_not_a_persisted_result(tmp_path):
    archive = Archive(tmp_path)
    rel = archive.write_transcript([{"role": "user", "content": "hi"}])
    archive.flush()
    assert not archive.is_persisted(rel) and rel not in archive.manifest()
    assert archive.valid_archive_marker(f"[1 messages archived at {rel}]")


def test_a_manifest_line_naming_a_file_outside_the_archive_is_ignored(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("user code")
    folder = tmp_path / RESULTS
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text(json.dumps({
        "path": "src/app.py", "tool_use_id": "t1", "chars": 9,
        "sha256": sha256_text("user code"), "format": "text"}) + "\n")
    archive = Archive(tmp_path)
    assert archive.trusted_pointer("t1", earlier_text("src/app.py")) is None
    assert archive.manifest() == {} and archive.problems


def test_a_log_line_from_before_blake3_is_still_checked_with_sha256(tmp_path):
    """An older workspace's entries carry "sha256": its files stay trusted while their bytes
    match, and a changed one is still caught."""
    folder = tmp_path / RESULTS
    folder.mkdir(parents=True)
    rel = f"{RESULTS.as_posix()}/toolu_01-7a95b703-0123456789abcdef.txt"
    text = "older result " * 300
    (tmp_path / rel).write_text(text)
    (folder / MANIFEST).write_text(json.dumps({
        "path": rel, "tool_use_id": "toolu_01", "chars": len(text),
        "sha256": sha256_text(text), "format": "text"}) + "\n")
    archive = Archive(tmp_path)
    assert archive.manifest_entry(rel).algorithm == "sha256"
    assert archive.trusted_pointer("toolu_01", earlier_text(rel)) == rel
    assert archive.recover("toolu_01", rel) == text
    # the same content persisted now gets a BLAKE3 entry of its own; the old one stays
    new = archive.persist("toolu_01", text)
    archive.flush()
    assert new != rel and archive.manifest_entry(new).algorithm == "blake3"
    assert Archive(tmp_path).manifest_entry(rel).algorithm == "sha256"
    (tmp_path / rel).write_text(text.upper())
    fresh = Archive(tmp_path)
    assert fresh.trusted_pointer("toolu_01", earlier_text(rel)) is None
    assert fresh.problems and "changed after ctxlab wrote it" in fresh.problems[0]
