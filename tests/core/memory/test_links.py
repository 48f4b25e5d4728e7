"""Two names of one file are one record, and consolidation never leaves a link as the only
trace of a fact whose file it removed.

People link records inside ``.memory`` (a short alias, a file shared by two names). Before,
a link to ``fact0.md`` scanned as a second, equal record: consolidation kept whichever
sorted or dated first, and when that was the link it removed the real file, leaving the
link dangling — one fact, no record. A link that consolidation did drop was named in
``dropped`` but its bytes never reached ``.history``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory.consolidate import consolidate_memories, fact_key
from core.memory.store import MemoryStore
from tests.core.memory.conftest import FakeProvider, document, run
from tests.core.memory.test_consolidate_safety import put


def bodies(root: Path) -> list[str]:
    return sorted(r.body for r in MemoryStore(root, read_only=True).records())


def test_a_link_to_a_record_is_the_same_record_and_consolidation_keeps_the_real_file(root):
    put(root, "fact0.md", document("fact", "a fact", "user", "The fact."), 1)
    original = (root / "fact0.md").read_bytes()
    (root / "aaa_link.md").symlink_to("fact0.md")
    store = MemoryStore(root)
    assert [r.file for r in store.records()] == ["fact0.md"]
    assert store.scan().aliases == {"aaa_link.md": "fact0.md"}
    result = run(consolidate_memories(store, force=True))
    assert result.ok and (result.before, result.after) == (1, 1)
    assert (root / "fact0.md").read_bytes() == original
    assert (root / "aaa_link.md").read_bytes() == original  # the link still resolves
    assert bodies(root) == ["The fact."]


def test_a_hard_link_is_one_record(root):
    put(root, "b.md", document("fact", "a fact", "user", "The fact."), 1)
    os.link(root / "b.md", root / "a.md")
    store = MemoryStore(root)
    assert [r.file for r in store.records()] == ["a.md"]
    assert store.scan().aliases == {"b.md": "a.md"}
    result = run(consolidate_memories(store, force=True))
    assert result.ok and result.after == 1
    assert bodies(root) == ["The fact."]


def test_a_dropped_record_takes_its_links_along_and_every_name_is_in_history(root):
    put(root, "fact0.md", document("old", "a fact", "user", "The fact."), 1)
    put(root, "fact1.md", document("new", "a fact", "user", "The  fact."), 2)
    (root / "aaa_link.md").symlink_to("fact0.md")  # the newest entry by its own mtime
    old = (root / "fact0.md").read_bytes()
    result = run(consolidate_memories(MemoryStore(root), force=True))
    assert result.ok and (result.before, result.after) == (2, 1)
    assert set(result.dropped) == {"fact0.md", "aaa_link.md"}
    assert not os.path.lexists(root / "aaa_link.md")  # no link left dangling
    assert (root / "fact1.md").exists() and bodies(root) == ["The  fact."]
    snapshot = root / result.history
    assert (snapshot / "old" / "fact0.md").read_bytes() == old
    assert (snapshot / "old" / "aaa_link.md").read_bytes() == old
    manifest = json.loads((snapshot / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["links"] == {"aaa_link.md": "fact0.md"}


def test_a_dropped_link_is_copied_to_history(root):
    """A link whose target is no record of its own (a ``.txt`` in the store) is the record;
    dropped, its bytes are in ``.history`` like any other record's."""
    put(root, "fact1.md", document("new", "a fact", "user", "The fact."), 5)
    text = document("old", "a fact", "user", "The  fact.")
    (root / "notes.txt").write_text(text, encoding="utf-8")
    os.utime(root / "notes.txt", ns=(10**18,) * 2)
    (root / "link.md").symlink_to("notes.txt")
    os.utime(root / "link.md", ns=(10**18,) * 2, follow_symlinks=False)
    result = run(consolidate_memories(MemoryStore(root), force=True))
    assert result.ok and result.dropped == ("link.md",)
    assert (root / result.history / "old" / "link.md").read_text(encoding="utf-8") == text
    assert (root / "notes.txt").read_text(encoding="utf-8") == text  # not a record: kept


WORDS = st.sampled_from(["port", "8000", "tabs", "x"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=1, max_size=2).map(" ".join), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=6))
def test_with_links_and_hard_links_every_name_is_accounted_for_and_no_fact_is_lost(
        texts, links):
    """Random records and random other names for them (links, hard links, named to sort
    before or after): every name stays with its bytes or is dropped with them in
    ``.history``, no link is left dangling, and one record per fact remains."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".memory"
        for i, text in enumerate(texts):
            put(root, f"r{i}.md", document(f"r {i}", "d", "user", text), i)
        for j, (target, hard) in enumerate(links):
            source = root / f"r{target % len(texts)}.md"
            alias = root / (f"a{j}.md" if j % 2 else f"z{j}.md")
            if hard:
                os.link(source, alias)
            else:
                alias.symlink_to(source.name)
        before = {p.name: p.read_bytes() for p in root.glob("*.md")}
        facts = {fact_key(t) for t in texts}
        result = run(consolidate_memories(MemoryStore(root), force=True))
        assert result.ok
        names = {p.name for p in root.glob("*.md") if p.name != "MEMORY.md"}
        assert all((root / n).exists() for n in names)  # nothing dangles
        assert names | set(result.dropped) == set(before) and not names & set(result.dropped)
        assert all((root / n).read_bytes() == before[n] for n in names)
        for file in result.dropped:
            assert (root / result.history / "old" / file).read_bytes() == before[file]
        kept = [fact_key(r.body) for r in MemoryStore(root, read_only=True).records()]
        assert sorted(kept) == sorted(facts)


def test_deleting_a_record_deletes_its_other_names(root):
    """Left behind, the link would dangle and the hard link would be the record again."""
    put(root, "fact0.md", document("fact", "a fact", "user", "The fact."), 1)
    (root / "aaa_link.md").symlink_to("fact0.md")
    os.link(root / "fact0.md", root / "hard.md")
    store = MemoryStore(root)
    assert [r.file for r in store.records()] == ["fact0.md"]
    assert store.delete("fact0.md")
    assert store.records() == [] and store.invalid() == []
    assert not any(os.path.lexists(root / n) for n in ("fact0.md", "aaa_link.md", "hard.md"))


def test_updating_a_record_leaves_no_hard_link_holding_its_old_version(root):
    """A write replaces the file by rename; a hard link to it would keep the old bytes and
    read as a second record of the same name. A link to it follows the new file."""
    put(root, "fact.md", document("fact", "a fact", "user", "Old."), 1)
    os.link(root / "fact.md", root / "hard.md")
    (root / "alias.md").symlink_to("fact.md")
    store = MemoryStore(root)
    store.write("fact", "a fact", "user", "New.")
    assert [(r.file, r.body) for r in store.records()] == [("fact.md", "New.")]
    assert not os.path.lexists(root / "hard.md")
    assert store.scan().aliases == {"alias.md": "fact.md"}


def test_a_hard_link_made_while_the_model_thinks_leaves_with_the_dropped_record(root):
    """The plan is made from the scan before the model call; the other names are taken
    from the listing under the lock, so a name added meanwhile cannot keep the fact."""
    put(root, "r0.md", document("r0", "d0", "user", "Dropped fact."), 1)
    put(root, "r1.md", document("r1", "d1", "user", "Kept fact."), 2)

    def answer(call):
        os.link(root / "r0.md", root / "a.md")  # sorts first: the listing's name for it now
        return json.dumps([{"name": "r1", "type": "user", "description": "d1",
                            "body": "Kept fact."}])

    result = run(consolidate_memories(MemoryStore(root), FakeProvider(answer), force=True))
    assert result.ok and set(result.dropped) == {"r0.md", "a.md"}
    assert bodies(root) == ["Kept fact."]
    assert (root / result.history / "old" / "a.md").read_text().endswith("Dropped fact.\n")
