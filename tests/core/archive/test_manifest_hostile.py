"""A manifest line anyone wrote is skipped and reported, never a crash.

One 2 kB line nested 1,000 deep appended to ``manifest.jsonl`` made every later run in that
workspace end in a ``RecursionError`` traceback, and ``ctxlab compact`` blamed its input
file for it. Every line that cannot be an entry — too deep, not JSON, wrong field types —
is now skipped with a problem message, and the rest of the log still counts.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from core.archive import manifest_sync
from core.archive.manifest import LEGACY_MANIFEST, MANIFEST
from core.archive.manifest_index import INDEX
from core.archive.store import Archive
from tui.cli import main

RESULTS = Path(".task_outputs/tool-results")
NOT_JSON = f"{MANIFEST}: a line that is not JSON is ignored"
TOO_DEEP = f"{MANIFEST}: a line nested too deeply is ignored"
DEEP = b"[" * 1000 + b"]" * 1000  # 2 kB: past the parser's recursion limit
WRONG_TYPES = [
    {"path": f"{RESULTS}/a.txt", "tool_use_id": 5, "chars": 1, "blake3": "00", "format": "text"},
    {"path": f"{RESULTS}/a.txt", "tool_use_id": "t", "chars": "1", "blake3": "0", "format": "t"},
    {"path": f"{RESULTS}/a.txt", "tool_use_id": "t", "chars": True, "blake3": "0", "format": "t"},
    {"path": [f"{RESULTS}/a.txt"], "pointer": "00"},
    {"path": f"{RESULTS}/a.txt", "blake3": {"nested": [1, 2]}},
    [], None, "a string", 12,
]


def archive_with_two_entries(ws: Path) -> tuple[Archive, list[str]]:
    archive = Archive(ws)
    rels = [archive.persist(f"toolu_{i}", f"result {i} " * 30) for i in range(2)]
    archive.flush()
    return archive, rels


def append(ws: Path, *lines: bytes) -> None:
    with open(ws / RESULTS / MANIFEST, "ab") as fh:
        for line in lines:
            fh.write(line + b"\n")


@pytest.mark.parametrize("deep", [DEEP, b'{"path": ' + DEEP + b"}", b"[" * 100_000],
                         ids=["1000-deep", "1000-deep-in-an-object", "100000-open"])
def test_a_line_nested_1000_deep_is_skipped_and_reported(tmp_path, deep):
    _, rels = archive_with_two_entries(tmp_path)
    append(tmp_path, deep)
    later = Archive(tmp_path / "")
    assert set(later.manifest()) == set(rels)
    assert later.problems in ([TOO_DEEP], [NOT_JSON])
    append(tmp_path, b'{"path": "x", "pointer": "y"}', deep)  # also amid whole lines
    again = Archive(tmp_path)
    assert set(again.manifest()) == set(rels)
    assert again.problems


def test_lines_of_wrong_types_are_skipped_and_reported(tmp_path):
    _, rels = archive_with_two_entries(tmp_path)
    append(tmp_path, *(json.dumps(value).encode() for value in WRONG_TYPES),
           b'{"chars": 1e400}', b'{"chars": ' + b"9" * 5000 + b"}", b"\xff\xfe")
    later = Archive(tmp_path)
    assert set(later.manifest()) == set(rels)
    assert later.problems and all(p.startswith(MANIFEST) for p in later.problems)


def test_a_deep_row_forged_into_the_index_is_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setattr(manifest_sync, "INDEX_FROM", 0)  # an index on disk for a short log
    _, rels = archive_with_two_entries(tmp_path)
    Archive(tmp_path).manifest()  # the log is read into the index
    index = tmp_path / RESULTS / INDEX
    assert index.exists()
    db = sqlite3.connect(index)
    db.execute("INSERT INTO entries VALUES (?, ?)", (f"{RESULTS}/deep.txt".encode(), DEEP))
    db.commit()
    db.close()
    later = Archive(tmp_path)
    assert set(later.manifest()) == set(rels)
    assert later._manifest.get(f"{RESULTS}/deep.txt") is None


def test_a_deep_legacy_manifest_is_reported_not_raised(tmp_path):
    (tmp_path / RESULTS).mkdir(parents=True)
    (tmp_path / RESULTS / LEGACY_MANIFEST).write_bytes(b'{"files": ' + DEEP + b"}")
    archive = Archive(tmp_path)
    assert archive.manifest() == {}
    assert archive.problems and LEGACY_MANIFEST in archive.problems[0]


def test_ctxlab_compact_reports_the_manifest_not_its_input(tmp_path, capsys):
    ws = tmp_path / "ws"
    archive_with_two_entries(ws)
    append(ws, DEEP)
    history = tmp_path / "history.json"
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 300_000}]}]
    history.write_text(json.dumps(messages))
    code = main(["compact", "--workdir", str(ws), str(history)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert str(history) not in err and "nested too deeply to process" not in err
    assert "Traceback" not in err
    assert "nested too deeply" in out + err  # the manifest's problem, said as its own
