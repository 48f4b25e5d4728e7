"""The manifest file reads back as exactly its entries, however it is written."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.archive.manifest import Persisted, entry_line, sha256_text
from core.archive.manifest_lines import json_string
from core.archive.store import MANIFEST, Archive


def test_a_flushed_manifest_is_exactly_the_json_lines_of_its_entries(tmp_path):
    archive = Archive(tmp_path)
    archive.persist("toolu_b", "second ✓")
    archive.persist("toolu_a", [{"type": "text", "text": "first \"quoted\""}])
    archive.flush()
    again = Archive(tmp_path)  # entries loaded back, then one more
    again.persist("toolu_c", "third")
    again.flush()
    text = (again.results_dir / MANIFEST).read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    entries = {k: {"path": v.path, "tool_use_id": v.tool_use_id, "chars": v.chars,
                   "blake3": v.digest, "format": v.format}
               for k, v in again.manifest().items()}
    assert {line["path"]: line for line in lines} == entries
    assert len(lines) == len(entries) == 3
    assert Archive(tmp_path).manifest() == again.manifest()


def test_nothing_to_flush_writes_nothing(tmp_path):
    archive = Archive(tmp_path)
    archive.flush()
    assert not (archive.results_dir / MANIFEST).exists()
    assert archive.manifest() == {}


any_text = st.text(alphabet=st.characters(exclude_categories=()))  # lone surrogates too


UNSAFE = set("$`\"'\\;|&<>(){}[]!#*?~\n\r\t\0")


@settings(max_examples=200)
@given(any_text, any_text, st.integers(0, 10**12), st.sampled_from(["blake3", "sha256"]),
       st.text(alphabet="0123456789abcdef"), st.sampled_from(["text", "json", "transcript"]))
def test_an_entry_line_reads_back_as_its_object_and_its_strings_hold_nothing_raw(
        path, tid, chars, algorithm, digest, fmt):
    """Whatever the id holds (``$(``, backticks, quotes, newlines, lone surrogates), the
    line is one JSON object that reads back exactly, with every such character escaped."""
    entry = Persisted(path, tid, chars, digest, fmt, algorithm)
    line = entry_line(entry)
    assert json.loads(line) == {"path": path, "tool_use_id": tid, "chars": chars,
                                algorithm: digest, "format": fmt}
    assert line.isascii() and "\n" not in line
    inside = [json_string(s)[1:-1] for s in (path, tid, algorithm, digest, fmt)]
    assert not [c for text in inside for c in text if c in UNSAFE and c != "\\"]


def test_a_shell_looking_id_is_written_escaped(tmp_path):
    """The id used to reach the log raw, ``$(touch X)`` and all."""
    archive = Archive(tmp_path)
    tid = "$(touch X)`id`\n; rm -rf ~ #"
    archive.persist(tid, "x" * 200)
    archive.flush()
    raw = (archive.results_dir / MANIFEST).read_text(encoding="ascii")
    assert "$(" not in raw and "`" not in raw and "touch X)" not in raw
    assert archive.manifest_entry(archive.path_for(tid, "x" * 200)).tool_use_id == tid
    assert Archive(tmp_path).manifest_entry(archive.path_for(tid, "x" * 200)).tool_use_id == tid


@given(any_text)
def test_a_pointer_line_reads_back_as_its_object(path):
    archive = Archive(Path("/nonexistent-workspace"))
    manifest = archive._manifest
    manifest.add_pointer(path, "wrapper text")
    ((line, _, _),) = manifest._pending
    assert json.loads(line) == {"path": path, "pointer": sha256_text("wrapper text")}
    assert line.isascii()
