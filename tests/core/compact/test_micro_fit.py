from core.archive.store import earlier_text, pointer_path
from core.compact.context import StageRun
from core.compact.stages import FIT_TOOL_RESULTS, MICRO_COMPACT
from tests.core.compact.builders import (
    assistant,
    chars,
    make,
    prepare,
    result,
    results,
    stages,
    turns,
    use,
)


def test_under_the_trigger_micro_does_not_run(tmp_path):
    comp, rec = make(tmp_path)
    history = turns(10)  # ~21k chars
    assert prepare(comp, history) == history and stages(rec) == []


def test_micro_keeps_three_recent_seen_results_and_stops_at_target(tmp_path):
    comp, rec = make(tmp_path, context_limit=20_000)
    history = turns(12)  # 12 results of ~2k each: ~26k chars
    out = prepare(comp, history)
    assert stages(rec) == ["micro_compact"]
    assert chars(out) <= 16_000  # target = int(20,000 * 0.8)
    blocks = [m["content"][0] for m in out if m["role"] == "user" and isinstance(m["content"],
                                                                                 list)]
    placeholders = [b for b in blocks if b["content"].startswith("[Earlier tool result saved")]
    assert placeholders, "old results became pointers"
    # oldest first, and it stopped as soon as the target was reached
    n = len(placeholders)
    assert blocks[:n] == placeholders and n < len(blocks) - 3
    for b in placeholders:
        path = pointer_path(b["content"])
        assert b["content"] == earlier_text(path)
        assert (tmp_path / path).read_text().startswith(b["tool_use_id"] + ":")


def test_micro_never_touches_unseen_results(tmp_path):
    comp, _rec = make(tmp_path, context_limit=5_000, keep_recent=0)
    history = [*turns(1, size=100), assistant(use("late")),
               results(result("late", "z" * 9_000))]
    # the last result is unseen: no assistant message after it. Micro may not touch it.
    from core.compact.micro import micro_compact, unseen_positions
    from core.measure import Measured

    h = Measured(list(history))
    assert unseen_positions(h.messages) == {(4, 0)}
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=10).finish()
    assert h.messages[4]["content"][0]["content"] == "z" * 9_000


def test_short_results_are_never_micro_compacted(tmp_path):
    comp, _ = make(tmp_path, context_limit=500, keep_recent=0)
    history = turns(5, size=50)
    from core.compact.micro import micro_compact
    from core.measure import Measured

    h = Measured(list(history))
    micro_compact(StageRun(MICRO_COMPACT, comp.ctx, h), target=0).finish()
    assert h.messages == history


def test_fit_previews_a_thousand_chars_including_unseen(tmp_path):
    comp, rec = make(tmp_path, context_limit=20_000)
    history = [*turns(1, size=100), assistant(use("big")),
               results(result("big", "B" * 30_000))]
    out = prepare(comp, history)
    assert stages(rec) == ["fit_tool_results"]  # micro had nothing seen to compact
    wrapped = out[-1]["content"][0]["content"]
    path = pointer_path(wrapped)
    assert wrapped == f"<persisted-output>\nFull output: {path}\nPreview:\n{'B' * 1000}\n" \
                      "</persisted-output>"
    assert (tmp_path / path).read_text() == "B" * 30_000


def test_fit_writes_no_file_for_a_preview_it_does_not_use(tmp_path):
    """A preview that would not be shorter is not used, and no file is written for it (the
    course saved the file before deciding)."""
    comp, _rec = make(tmp_path, context_limit=2_000)
    history = [assistant(use("tiny")), results(result("tiny", "11 chars ok"))]
    history = [{"role": "user", "content": "q" * 3_000}, *history]
    from core.compact.fit import fit_tool_results
    from core.measure import Measured

    h = Measured(list(history))
    fit_tool_results(StageRun(FIT_TOOL_RESULTS, comp.ctx, h), target=10).finish()
    assert h.messages == history
    assert not (tmp_path / ".task_outputs").exists()
