"""The manifest file reads back as exactly its entries, however it is written."""

from __future__ import annotations

import json

from core.compact.archive import MANIFEST, Archive


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
