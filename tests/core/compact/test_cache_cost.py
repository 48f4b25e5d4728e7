"""Every stage's cache cost: the first message it changed and the tokens after it."""

from __future__ import annotations

from core.archive.store import Archive
from core.compact.context import CompactContext, StageRun
from core.compact.stages import MICRO_COMPACT
from core.events import Recorder, Stage
from core.measure import Measured, json_chars

HISTORY = [
    {"role": "user", "content": "start"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                       "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                  "content": "x" * 400}]},
    {"role": "assistant", "content": "done"},
]


def run_on(tmp_path, change) -> Stage:
    recorder = Recorder()
    history = Measured(list(HISTORY))
    run = StageRun(MICRO_COMPACT, CompactContext(Archive(tmp_path), emit=recorder), history)
    change(history)
    run.changed = True
    run.finish()
    (stage,) = recorder.of(Stage)
    return stage


def test_a_changed_result_costs_the_tokens_from_its_message_on(tmp_path):
    stage = run_on(tmp_path, lambda h: h.set_content(2, 0, "[cleared]"))
    assert stage.first_changed == 2
    after = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                           "content": "[cleared]"}]}, HISTORY[3]]
    assert stage.rewrite_tokens == -(-(json_chars(after) - 2) // 4)


def test_a_summary_that_rewrites_the_front_costs_everything(tmp_path):
    summary = {"role": "user", "content": "[Compacted] the work so far"}
    stage = run_on(tmp_path, lambda h: h.replace_all([summary, HISTORY[3]]))
    assert stage.first_changed == 0
    assert stage.rewrite_tokens == -(-(json_chars([summary, HISTORY[3]]) - 2) // 4)


def test_dropping_only_the_tail_rewrites_nothing(tmp_path):
    stage = run_on(tmp_path, lambda h: h.replace_all(list(HISTORY[:3])))
    assert (stage.first_changed, stage.rewrite_tokens) == (3, 0)
