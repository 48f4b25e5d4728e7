"""Consolidation: offline merging, model batches, gates, the cap, snapshots and recovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.events import (
    IndexRebuilt,
    MemoryConsolidated,
    MemoryConsolidationFailed,
    MemoryRejected,
    MemoryWritten,
)
from core.memory import journal
from core.memory.consolidate import (
    CONSOLIDATE_INPUT_CHAR_LIMIT,
    MAX_CONSOLIDATED,
    consolidate_memories,
    offline_consolidate,
    plan_batches,
    record_block,
)
from core.memory.hooks import MemoryHooks
from core.memory.store import MemoryStore, Record
from core.providers.base import ProviderError
from tests.core.memory.conftest import FakeProvider, run, tree_hashes, user


def fill(store: MemoryStore, items: list[tuple[str, str, str]], type_: str = "user") -> None:
    """Write (name, description, body) records with strictly increasing mtimes."""
    for i, (name, description, body) in enumerate(items):
        record = store.write(name, description, type_, body)
        os.utime(store.root / record.file, ns=(10**18 + i * 10**9,) * 2)


def distinct(n: int, start: int = 0) -> list[tuple[str, str, str]]:
    return [(f"fact {i}", f"distinct description {i}", f"body number {i} " + "z" * i)
            for i in range(start, start + n)]


def as_json(items: list[dict]) -> str:
    return json.dumps(items, ensure_ascii=False)


def test_offline_merges_only_the_same_body_newest_wins(store, recorder, root):
    fill(store, [*distinct(8),
                 ("tabs_preference", "User prefers tabs", "Use tabs for indentation."),
                 ("tabs-preference", "Indentation style", "Use tabs\nfor  indentation."),
                 ("Indent style", "User prefers tabs", "Use TABS for indentation"),
                 ("Tabs Preference", "Corrected: spaces", "Use four spaces, not tabs.")])
    result = run(consolidate_memories(store))
    assert result.ok and (result.before, result.after) == (12, 11)
    names = {r.name: r for r in store.records()}
    assert names["tabs-preference"].body == "Use tabs\nfor  indentation."
    assert names["Tabs Preference"].body == "Use four spaces, not tabs."
    assert "Indent style" in names and "tabs_preference" not in names
    event = recorder.of(MemoryConsolidated)[-1]
    assert (event.before, event.after, event.batches) == (12, 11, 1)
    assert event.dropped == result.dropped == ("tabs_preference.md",)
    assert recorder.of(IndexRebuilt)[-1].records == 11
    assert len((root / "MEMORY.md").read_text().splitlines()) == 11


def test_the_snapshot_holds_every_removed_file(store, root):
    fill(store, [*distinct(10), ("fact 0 copy", "other", distinct(1)[0][2] + "\n")])
    before = (root / "fact-0.md").read_bytes()
    result = run(consolidate_memories(store))
    old = root / result.history / "old"
    assert {p.name: p.read_bytes() for p in old.iterdir()} == {"fact-0.md": before}
    manifest = json.loads((root / result.history / "manifest.json").read_text())
    assert manifest["removed"] == ["fact-0.md"] and result.dropped == ("fact-0.md",)
    assert not (root / journal.JOURNAL_NAME).exists()


def test_below_the_threshold_nothing_happens_unless_forced(store, recorder):
    fill(store, [("a", "d1", "same body"), ("b", "d2", "same body")])
    result = run(consolidate_memories(store))
    assert not result.ok and recorder.of(MemoryConsolidated) == []
    assert run(consolidate_memories(store, force=True)).after == 1


def test_nothing_to_merge_rewrites_nothing(store, root):
    fill(store, distinct(10))
    before = tree_hashes(root)
    result = run(consolidate_memories(store))
    assert result.ok and result.history is None and tree_hashes(root) == before


def test_the_model_output_passes_the_gates_and_keeps_file_names(store, recorder):
    fill(store, distinct(10))
    answer = as_json([
        {"name": "fact 1", "type": "user", "description": "merged 1", "body": "merged body"},
        {"name": "port", "type": "project", "description": "dev port",
         "body": "Use port 8080 for this session only."},
        {"name": "fact_1", "type": "user", "description": "dup", "body": "merged\n body"},
        {"name": "bad", "type": "opinion", "description": "x", "body": "y"},
    ])
    provider = FakeProvider(answer)
    result = run(consolidate_memories(store, provider))
    assert result.ok and [r.file for r in store.records()] == ["fact-1.md"]
    reasons = [e.reason for e in recorder.of(MemoryRejected)]
    assert reasons[0] == "temporary marker 'this session'"
    assert reasons[1].startswith("duplicate") and reasons[2].startswith("unknown type")
    assert provider.calls[0].purpose == "consolidate"
    assert provider.calls[0].max_tokens == 3000


def test_the_thirty_record_cap_is_enforced_and_announced(store, recorder):
    fill(store, distinct(12))
    answer = as_json([{"name": f"n{i}", "type": "user", "description": f"d{i}",
                       "body": f"b{i}"} for i in range(35)])
    result = run(consolidate_memories(store, FakeProvider(answer)))
    assert result.ok and result.after == MAX_CONSOLIDATED == len(store.records())
    dropped = [e for e in recorder.of(MemoryRejected) if "cap" in e.reason]
    assert [e.name for e in dropped] == [f"n{i}" for i in range(30, 35)]


def test_a_large_store_is_consolidated_in_announced_batches(store, recorder):
    fill(store, [(f"topic {i}", f"description {i}", f"{i} " + "w" * 900) for i in range(40)])
    seen: list[int] = []

    def answer(call) -> str:
        prompt = call.messages[0]["content"]
        seen.append(len(prompt))
        names = [line[len("name: "):] for line in prompt.splitlines() if line.startswith("name: ")]
        return as_json([{"name": n, "type": "user", "description": f"kept {n}",
                         "body": f"kept {n}"} for n in names[:1]])

    result = run(consolidate_memories(store, FakeProvider(answer)))
    assert result.ok and result.batches == len(seen) >= 2
    assert all(size < CONSOLIDATE_INPUT_CHAR_LIMIT + 1_000 for size in seen)
    assert recorder.of(MemoryConsolidated)[-1].batches == result.batches
    assert len(store.records()) == result.batches


def test_plan_batches_fits_the_limit_and_carries_a_giant():
    records = [Record(f"r{i}.md", f"r{i}", "d", "user", "x" * 3_000) for i in range(10)]
    giant = Record("g.md", "g", "d", "user", "y" * 25_000)
    batches, carried = plan_batches([*records, giant])
    assert carried == [giant] and sum(map(len, batches)) == 10
    for batch in batches:
        assert len("\n\n".join(record_block(r) for r in batch)) <= CONSOLIDATE_INPUT_CHAR_LIMIT


@pytest.mark.parametrize(("answer", "reason"), [
    (ProviderError("overloaded"), "model call failed"),
    ("Sorry, I cannot.", "not a JSON array"),
    ('[{"name": "x"}]', "no valid records"),
])
def test_a_failed_consolidation_changes_nothing(store, recorder, root, answer, reason):
    fill(store, distinct(10))
    before = tree_hashes(root)
    result = run(consolidate_memories(store, FakeProvider(answer)))
    assert not result.ok and reason in result.reason
    (failed,) = recorder.of(MemoryConsolidationFailed)
    assert reason in failed.reason
    assert tree_hashes(root) == before


def test_a_truncated_answer_is_a_failure(store, root):
    fill(store, distinct(10))
    provider = FakeProvider("[", stop_reason="max_tokens")
    assert "truncated" in run(consolidate_memories(store, provider)).reason


def test_a_hand_edit_during_the_model_call_wins(store, root):
    fill(store, distinct(10))
    edited = "---\nname: fact 3\ndescription: edited by hand\ntype: user\n---\n\nnew\n"

    def answer(call) -> str:
        (root / "fact-3.md").write_text(edited, encoding="utf-8")
        return as_json([{"name": "all", "type": "user", "description": "d", "body": "b"}])

    result = run(consolidate_memories(store, FakeProvider(answer)))
    assert not result.ok and "changed while consolidating" in result.reason
    assert (root / "fact-3.md").read_text(encoding="utf-8") == edited
    assert len(store.records()) == 10


def end_of_turn(store: MemoryStore, recorder, turn: list[dict]) -> list:
    """What the agent loop does after a turn (offline extraction and consolidation): the
    events it emitted."""
    hooks = MemoryHooks(store.root.parent, recorder, store=store)
    start = len(recorder.events)
    run(hooks.after_turn(turn, None, None))
    return recorder.events[start:]


def test_the_end_of_a_turn_consolidates_once_the_store_reaches_ten(store, recorder):
    fill(store, [*distinct(8), ("dup a", "same words here", "same body here")])
    turn = [user("Remember that the build uses make. I prefer short answers.")]
    events = end_of_turn(store, recorder, turn)
    assert len([e for e in events if isinstance(e, MemoryWritten)]) == 2
    assert [e for e in events if isinstance(e, MemoryConsolidated)]
    assert not [e for e in events if isinstance(e, MemoryConsolidationFailed)]


def test_the_end_of_a_turn_without_a_store_write_does_not_consolidate(store, recorder):
    fill(store, distinct(12))
    events = end_of_turn(store, recorder, [user("just a question?")])
    assert not [e for e in events
                if isinstance(e, MemoryWritten | MemoryConsolidated | MemoryConsolidationFailed)]


# -- journal and recovery (in-process; the SIGKILL version is in test_crash.py) ---------------


class Stop(BaseException):
    pass


def stop_at(step_prefix: str):
    def hook(step: str) -> None:
        if step.startswith(step_prefix):
            raise Stop(step)
    return hook


@pytest.fixture
def fault(monkeypatch):
    def install(prefix: str) -> None:
        monkeypatch.setattr(journal, "FAULT_HOOK", stop_at(prefix))
    return install


def records_of(root: Path) -> list[tuple[str, str]]:
    return sorted((r.name, r.body) for r in MemoryStore(root, read_only=True).records())


def test_a_crash_after_the_commit_point_rolls_forward_on_open(store, root, fault):
    fill(store, [*distinct(9), ("fact 0 again", "again", distinct(1)[0][2] + " ")])
    fault("unlink:")
    with pytest.raises(Stop):
        run(consolidate_memories(store))
    assert (root / journal.JOURNAL_NAME).exists()
    journal.FAULT_HOOK = None
    reopened = MemoryStore(root)
    assert not (root / journal.JOURNAL_NAME).exists()
    assert len(reopened.records()) == 9
    assert len((root / "MEMORY.md").read_text().splitlines()) == 9


def test_a_crash_before_the_commit_point_leaves_the_old_set(store, root, fault):
    fill(store, [*distinct(9), ("fact 0 again", "again", distinct(1)[0][2] + " ")])
    before = records_of(root)
    fault("replace:manifest.json")
    with pytest.raises(Stop):
        run(consolidate_memories(store))
    journal.FAULT_HOOK = None
    MemoryStore(root)
    assert records_of(root) == before and not (root / journal.JOURNAL_NAME).exists()
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]


def test_a_corrupt_journal_is_reported_and_left_alone(root, recorder):
    root.mkdir()
    (root / journal.JOURNAL_NAME).write_text("{not json")
    MemoryStore(root, recorder)
    (error,) = recorder.events
    assert error.kind == "memory" and "recovery failed" in error.message
    assert (root / journal.JOURNAL_NAME).read_text() == "{not json"


def test_history_is_pruned(root):
    base = root / journal.HISTORY_DIR
    for i in range(25):
        (base / f"2026010{i:02}").mkdir(parents=True)
        (base / f"2026010{i:02}" / journal.MANIFEST_NAME).write_text("{}")
    journal.prune_history(root, keep=20)
    assert len(list(base.iterdir())) == 20 and not (base / "202601000").exists()


def test_offline_consolidate_orders_newest_first():
    records = [Record("a.md", "a", "da", "user", "x"), Record("b.md", "b", "db", "user", "y")]
    out = offline_consolidate(records, {"a.md": 1, "b.md": 2})
    assert [item["name"] for item in out] == ["b", "a"]
