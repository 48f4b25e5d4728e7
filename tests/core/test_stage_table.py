"""Adding a compaction stage is its module plus one table row (and its words in the UI's
locales): proved with a stage that exists only in this test. Its name is written once, in
its row: the stage function never spells it, yet its events carry it and whose stage it is."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.compact.context import StageRun
from core.compact.managers import Manager
from core.compact.stages import SNIP_COMPACT, StageSpec, registered, row_of, stage_names
from core.compact.truncate import ENGINES
from core.events import Recorder, Stage
from core.measure import json_chars
from core.messages import iter_tool_results
from core.scenarios import find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from tui.locales import CATALOGS
from tui.stage_diff import StageRecord, sides
from tui.why import stage_hint

MARK = " [checked]"


def mark_checked(run: StageRun) -> StageRun:
    """A toy stage: append a mark to every string tool result that lacks it."""
    history = run.history
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
    with registered(spec, after=SNIP_COMPACT):
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
    assert event.by == spec.manager == "ctxlab" and event.after_chars > event.before_chars
    before, after = sides(StageRecord(1, event))
    assert before.messages is not None and after.messages is not None
    assert json_chars(after.messages) == event.after_chars
    assert any(MARK in str(m) for m in after.messages)
    with registered(spec, after=SNIP_COMPACT):  # its words are its row's
        assert stage_hint(event) == "results → marked"
    assert stage_hint(event) == ""  # without the row, no stage of ctxlab's has that name


@pytest.mark.parametrize("manager", list(ENGINES))
def test_every_stage_an_engine_emits_is_a_row_by_the_rows_manager(tmp_path: Path,
                                                                   manager: Manager) -> None:
    """No engine spells a stage name of its own: what it emits is a row, and ``by`` says
    the row's manager (the offline editing falls back to the pipeline's summaries)."""
    recorder = Recorder()
    options = RunOptions(workspace=tmp_path, scenario=find_scenario("refactor-auth"),
                         compaction=manager, memory=False)
    assert asyncio.run(AgentSession(options, recorder).run())
    stages = recorder.of(Stage)
    assert [e.stage for e in stages if row_of(e.stage, e.by) is None] == []
    assert any(e.by == manager for e in stages)  # the engine's own stage fired
