"""Adding a compaction stage is its module plus one table row (and two locale strings):
proved with a stage that exists only in this test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.compact.context import CompactContext, StageRun
from core.compact.stages import StageSpec, registered, stage_names
from core.events import Recorder, Stage
from core.measure import Measured, json_chars
from core.messages import iter_tool_results
from core.scenarios import find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from tui.locales import CATALOGS
from tui.stage_diff import StageRecord, sides
from tui.widgets.stage_timeline import stage_hint

MARK = " [checked]"


def mark_checked(history: Measured, ctx: CompactContext) -> StageRun:
    """A toy stage: append a mark to every string tool result that lacks it."""
    run = StageRun("mark_checked", ctx, history)
    for mi, bi, block in list(iter_tool_results(history.messages)):
        content = block.get("content")
        if isinstance(content, str) and not content.endswith(MARK):
            history.set_content(mi, bi, content + MARK)
            run.changed = True
    return run


def test_a_stage_registered_from_a_test_runs_in_its_place_and_is_labelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CATALOGS["en"], "hint.mark_checked", "results → marked")
    monkeypatch.setitem(CATALOGS["zh"], "hint.mark_checked", "结果 → 已标记")
    recorder = Recorder()
    spec = StageSpec("mark_checked", writes="nothing", run=mark_checked)
    with registered(spec, after="snip_compact"):
        table = stage_names()
        assert table[:3] == ("tool_result_budget", "snip_compact", "mark_checked")
        options = RunOptions(workspace=tmp_path, scenario=find_scenario("refactor-auth"),
                             record_stages=True)
        assert asyncio.run(AgentSession(options, recorder).run())
    assert "mark_checked" not in stage_names()  # the table is as it was
    stages = recorder.of(Stage)
    marked = [e for e in stages if e.stage == "mark_checked"]
    assert marked, "the new stage never fired"
    # It runs in its row's place: between two main calls, stages fire in table order.
    rounds: list[list[str]] = [[]]
    for e in recorder.events:
        if e.type == "model_request" and e.purpose == "main":
            rounds.append([])
        elif isinstance(e, Stage) and e.stage != "reactive_compact":
            rounds[-1].append(e.stage)
    assert any("mark_checked" in r for r in rounds)
    for names in rounds:
        assert names == sorted(names, key=table.index), names
    # Everything downstream knows it: its event, its recorded lists, its label.
    event = marked[0]
    assert event.by == "ctxlab" and event.after_chars > event.before_chars
    before, after = sides(StageRecord(1, event))
    assert before.messages is not None and after.messages is not None
    assert json_chars(after.messages) == event.after_chars
    assert any(MARK in str(m) for m in after.messages)
    assert stage_hint("mark_checked") == "results → marked"
