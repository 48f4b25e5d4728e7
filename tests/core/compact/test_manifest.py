"""The manifest file is the JSON of its entries, however it is written."""

from __future__ import annotations

import json

from core.compact.archive import MANIFEST, Archive


def test_a_flushed_manifest_is_exactly_the_json_of_its_entries(tmp_path):
    archive = Archive(tmp_path)
    archive.persist("toolu_b", "second ✓")
    archive.persist("toolu_a", [{"type": "text", "text": "first \"quoted\""}])
    archive.flush()
    again = Archive(tmp_path)  # entries loaded back, then one more
    again.persist("toolu_c", "third")
    again.flush()
    text = (again.results_dir / MANIFEST).read_text(encoding="utf-8")
    entries = {k: vars(v) for k, v in sorted(again.manifest().items())}
    assert text == json.dumps({"files": entries}, ensure_ascii=False)
    assert len(entries) == 3


def test_an_empty_manifest_is_still_an_object(tmp_path):
    archive = Archive(tmp_path)
    archive._manifest_dirty = True
    archive.flush()
    assert json.loads((archive.results_dir / MANIFEST).read_text()) == {"files": {}}
