"""One test per defect of the course's s09 memory code (numbered 8–18, after the seven of
s08 in ``tests/core/compact/test_defects.py``). Each fails on the course's code.

The comment above each test says what the course does instead.
"""

from __future__ import annotations

import json
import os

import pytest

from core.events import MemoryConsolidated, MemoryRejected, MemorySelected
from core.memory import journal
from core.memory.consolidate import consolidate_memories
from core.memory.extract import Deduper, Rejection, dialogue_text, extract_memories, gate
from core.memory.select import keyword_select, recent_user_text, select_memories
from core.memory.store import MemoryStore, MemoryStoreError, Record
from tests.core.memory.conftest import FakeProvider, assistant, run, user


def persistent(name: str, body: str, description: str = "a description") -> dict[str, str]:
    return {"name": name, "type": "user", "scope": "persistent", "description": description,
            "body": body}


# 8. The course splits on the raw "---" and gets "desc with" plus a leaked body.
def test_defect_08_triple_dash_inside_values(store, root):
    record = store.write("a --- b", "desc with --- inside", "user", "body\n---\nmore")
    assert store.records() == [record]
    root.joinpath("hand.md").write_text(
        "---\nname: hand\ndescription: desc with --- inside\ntype: user\n---\n\nbody\n")
    assert store.get("hand").description == "desc with --- inside"


# 9. The course writes "!!!" and "MEMORY" to the same memory.md, and turns
#    "../../etc/passwd" into etc-passwd.md without a word.
def test_defect_09_collisions_and_path_names(store, root):
    first = store.write("!!!", "first", "user", "one")
    second = store.write("MEMORY", "second", "user", "two")
    assert first.file != second.file
    assert {r.body for r in store.records()} == {"one", "two"}
    with pytest.raises(MemoryStoreError, match="path"):
        store.write("../../etc/passwd", "d", "user", "b")
    assert not (root / "etc-passwd.md").exists()


# 10. The course keeps the first 4,000 (query) and 8,000 (dialogue) chars.
def test_defect_10_newest_text_is_kept():
    messages = [user("old " * 3_000), user("middle " * 500), user("NEWEST-REQUEST")]
    assert recent_user_text(messages).endswith("NEWEST-REQUEST")
    assert dialogue_text([*messages, assistant("NEWEST-REPLY")]).endswith("NEWEST-REPLY")


# 11. The course returns [] for a non-JSON answer; only an exception falls back.
def test_defect_11_fallback_on_a_bad_answer(store, recorder):
    store.write("tabs", "indentation uses tabs", "user", "Use tabs.")
    chosen = run(select_memories(store, [user("indentation please")],
                                 FakeProvider("The tabs record is relevant.")))
    assert [r.name for r in chosen] == ["tabs"]
    assert recorder.of(MemorySelected)[-1].method == "keyword"


# 12. The course treats a CJK run as one word: 制表符缩进 does not find 缩进使用制表符.
def test_defect_12_cjk_bigrams():
    records = [Record("tabs.md", "缩进", "缩进使用制表符", "user", "b")]
    assert keyword_select(records, "请用制表符缩进") == records


# 13. The course rejects "for nowhere", "current turnover", "暂时性" and accepts
#     "this conversation", "temporarily", "this run", "本次會話", "for-now".
@pytest.mark.parametrize("text", ["for nowhere", "current turnover", "暂时性错误要重试"])
def test_defect_13_no_false_positives(text):
    assert not isinstance(gate(persistent("n", f"Note: {text}."), Deduper()), Rejection)


@pytest.mark.parametrize("text", ["this conversation", "temporarily", "this run", "本次會話",
                                  "for-now"])
def test_defect_13_no_misses(text):
    result = gate(persistent("n", f"Use spaces {text}."), Deduper())
    assert isinstance(result, Rejection) and "temporary marker" in result.reason


# 14. The course stores tabs_preference next to tabs-preference.
def test_defect_14_near_duplicate_slugs(store, recorder):
    store.write("tabs-preference", "one description", "user", "one body")
    run(extract_memories(store, [user("x")], FakeProvider(json.dumps(
        [persistent("tabs_preference", "another body", "another description")]))))
    assert [r.name for r in store.records()] == ["tabs-preference"]
    assert "same name" in recorder.of(MemoryRejected)[-1].reason


# 15. The course raises "too large for one consolidation pass" above 20,000 chars.
def test_defect_15_large_stores_are_consolidated_in_batches(store, recorder):
    for i in range(30):
        store.write(f"topic {i}", f"description {i}", "project", f"{i} " + "x" * 1_000)
    provider = FakeProvider(json.dumps([persistent("merged", "everything")]))
    result = run(consolidate_memories(store, provider))
    assert result.ok and len(provider.calls) >= 2
    assert recorder.of(MemoryConsolidated)[-1].batches == len(provider.calls)


# 16. The course keeps "this session only" records and more than 30 records.
def test_defect_16_consolidation_applies_gates_and_cap(store):
    for i in range(10):
        store.write(f"fact {i}", f"description {i}", "user", f"body {i}")
    answer = [persistent("port", "Use 8080 for this session only", "dev port")]
    answer += [persistent(f"n{i}", f"b{i}", f"d{i}") for i in range(31)]
    result = run(consolidate_memories(store, FakeProvider(json.dumps(answer))))
    names = {r.name for r in store.records()}
    assert result.ok and "port" not in names and len(names) == 30


# 17. The course's rollback lives in memory: a crash after deleting loses records.
def test_defect_17_a_crash_mid_swap_is_recovered_from_disk(store, root, monkeypatch):
    for i in range(10):
        store.write(f"fact {i}", f"description {i}", "user", f"body {i}")
    store.write("fact 0 again", "description 0", "user", "body\n0")  # the same fact
    os.utime(root / "fact-0-again.md", ns=(2 * 10**18,) * 2)

    class Killed(BaseException):
        pass

    def die(step: str) -> None:
        if step.startswith("unlink:"):
            raise Killed(step)

    monkeypatch.setattr(journal, "FAULT_HOOK", die)
    with pytest.raises(Killed):
        run(consolidate_memories(store))
    monkeypatch.setattr(journal, "FAULT_HOOK", None)
    recovered = MemoryStore(root).records()
    assert sorted(r.body for r in recovered) == sorted(
        ["body\n0"] + [f"body {i}" for i in range(1, 10)])
    assert any((root / ".history").iterdir())


# 18. The course extracts from the post-compaction history, where an early preference
#     survives only inside a summary. ctxlab reads the pre-compaction snapshot.
def test_defect_18_extraction_reads_the_pre_compaction_turn(store):
    turn = [user("I prefer tabs over spaces. Now refactor the auth module.")]
    for i in range(8):
        turn.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {}}]})
        turn.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 5_000}]})
    turn.append(assistant("Done: the auth module is refactored."))
    compacted = [user("[Compacted]\n\nCurrent user request:\nrefactor auth\n\n"
                      "Conversation summary (reference only):\n\"auth refactored\"")]
    assert run(extract_memories(MemoryStore(store.root.parent / "other"), compacted)) == []
    stored = run(extract_memories(store, turn))
    assert [r.name for r in stored] == ["prefers tabs over spaces"]
