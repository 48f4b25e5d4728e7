from core.archive.store import wrapper_text
from tests.core.compact.builders import assistant, make, prepare, result, results, stages, use


def batch(*sizes: int) -> list[dict]:
    ids = [f"r{i}" for i in range(len(sizes))]
    return [assistant(*(use(i) for i in ids)),
            results(*(result(i, chr(97 + n) * s) for n, (i, s) in enumerate(zip(ids, sizes,
                                                                                 strict=True))))]


def test_under_budget_nothing_happens(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = batch(29_000, 29_000, 29_000)
    assert prepare(comp, history) == history
    assert stages(rec) == []
    assert not (tmp_path / ".task_outputs").exists()


def test_largest_first_and_stops_once_under_200k(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = batch(40_000, 150_000, 35_000)  # total 225k
    out = prepare(comp, history)
    contents = [b["content"] for b in out[-1]["content"]]
    assert contents[1].startswith("<persisted-output>\nFull output: .task_outputs/tool-results/")
    # after the largest went, 75k remain: under budget, so the other >30k blocks stay inline
    assert contents[0] == "a" * 40_000 and contents[2] == "c" * 35_000
    assert stages(rec) == ["tool_result_budget"]
    path = comp.ledger[0]["where"]
    assert contents[1] == wrapper_text(path, "b" * 2000)
    assert (tmp_path / path).read_text() == "b" * 150_000


def test_small_results_never_reduced_whatever_the_total(tmp_path):
    comp, rec = make(tmp_path, context_limit=10**9)
    history = batch(*([30_000] * 8))  # 240k, all exactly at the limit
    assert prepare(comp, history) == history
    assert stages(rec) == []


def test_only_the_last_message_is_budgeted(tmp_path):
    comp, _rec = make(tmp_path, context_limit=10**9)
    history = [*batch(250_000), {"role": "assistant", "content": "done"}]
    assert prepare(comp, history) == history
