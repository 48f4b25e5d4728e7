"""Strategy comparison: the sliding-window engine, the metrics, and the course's story compared.

The headline (what the lab is for): on refactor-auth the sliding window loses tool output
and forgets facts stated early that s08 + s09 keep.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.compact.api_compaction import ApiCompaction
from core.compact.clear_tool_uses import ApiClearToolUses
from core.compact.managers import Manager
from core.compact.observation_masking import ObservationMasking
from core.compact.stages import SLIDING_WINDOW
from core.compact.truncate import (
    ENGINES,
    SlidingWindow,
    dropped_before,
    dropped_marker,
    make_compactor,
    window_start,
)
from core.compare import (
    STRATEGIES,
    CompareError,
    Strategy,
    compare_sync,
    parse_strategies,
    run_strategy,
    side_work,
    summary_notes,
)
from core.config import Thresholds
from core.events import MemorySelected, ModelRequest, Recorder, Stage, TurnEnd
from core.measure import json_chars
from core.messages import has_tool_result, iter_tool_results, validate_pairs
from core.scenarios import find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from tests.core.compact.builders import turns, user
from tests.core.compact.test_properties import THRESHOLDS, histories

# -- the sliding window ---------------------------------------------------------------------


def window(tmp: Path, **limits: int) -> tuple[SlidingWindow, Recorder]:
    rec = Recorder()
    return SlidingWindow(tmp, Thresholds(**limits), emit=rec), rec


def test_under_the_limit_nothing_is_dropped(tmp_path):
    engine, rec = window(tmp_path)
    history = turns(3)
    assert asyncio.run(engine.prepare(history, "go")) == history
    assert rec.events == [] and engine.ledger == []


def test_over_the_limit_the_newest_messages_that_fit_are_kept(tmp_path):
    engine, rec = window(tmp_path, context_limit=10_000)
    history = turns(10, size=2_000)  # ~21k chars
    out = asyncio.run(engine.prepare(history, "go"))
    assert json_chars(out) <= 10_000
    assert out[0] == user(f"[{len(history) - len(out) + 1} earlier messages dropped]")
    assert out[1:] == history[-(len(out) - 1):]  # the newest, untouched
    assert json_chars([user("[1 earlier messages dropped]"), *history[-(len(out) + 1):]]) \
        > 10_000  # one more pair would not have fitted
    assert validate_pairs(out) == [] and not has_tool_result(out[1])
    (stage,) = rec.events
    assert (stage.stage, stage.by) == (SLIDING_WINDOW.name, Manager.TRUNCATE)
    dropped = {b["tool_use_id"] for _, _, b in iter_tool_results(history)} - {
        b["tool_use_id"] for _, _, b in iter_tool_results(out)}
    assert {x["tool_use_id"] for x in engine.ledger} == dropped
    assert {x["where"] for x in engine.ledger} == {"lost"}  # no summary, no file
    assert not (tmp_path / ".task_outputs").exists() and not (tmp_path / ".transcripts").exists()


def test_the_window_slides_and_counts_everything_it_ever_dropped(tmp_path):
    engine, _ = window(tmp_path, context_limit=10_000)
    history = turns(10, size=2_000)
    out = asyncio.run(engine.prepare(history, "go"))
    assert asyncio.run(engine.prepare(out, "go")) == out  # stable when nothing was added
    more = [*out, *turns(3, size=2_000, prefix="m")[1:]]
    again = asyncio.run(engine.prepare(more, "go"))
    kept = len(again) - 1
    assert dropped_before(again) == len(history) + 6 - kept
    assert validate_pairs(again) == []


def test_a_batch_bigger_than_the_limit_is_kept_whole(tmp_path):
    """A window cannot shrink a message: the newest pair is sent even if it is too big."""
    engine, _ = window(tmp_path, context_limit=5_000)
    history = [*turns(2, size=100), *turns(1, size=20_000, prefix="big")[1:]]
    out = asyncio.run(engine.prepare(history, "go"))
    assert out[1:] == history[-2:]
    assert validate_pairs(out) == []


def test_reactive_and_manual_keep_a_pair_safe_tail(tmp_path):
    engine, rec = window(tmp_path, reactive_keep=3)
    history = turns(4, size=10)  # keeping 3 would start on a results message
    for out in (asyncio.run(engine.reactive(history, "go")),
                asyncio.run(engine.compact(history, "go"))):
        assert out[1:] == history[-4:]
        assert validate_pairs(out) == []
    assert {e.stage for e in rec.events} == {SLIDING_WINDOW.name}


def test_make_compactor_names_the_engines():
    with tempfile.TemporaryDirectory() as tmp:
        assert type(make_compactor(Manager.TRUNCATE, Path(tmp))) is SlidingWindow
        assert type(make_compactor(Manager.PIPELINE, Path(tmp))).__name__ == "Compactor"
        assert type(make_compactor("s08", Path(tmp))).__name__ == "Compactor"  # older name
        assert type(make_compactor(Manager.API_EDIT, Path(tmp))) is ApiClearToolUses
        assert type(make_compactor(Manager.API_COMPACT, Path(tmp))) is ApiCompaction
        masking = make_compactor("observation-masking", Path(tmp))
        assert type(masking) is ObservationMasking
        for name in ("nope", Manager.CLIENT, Manager.CLAUDE_CODE):  # not ctxlab's to run
            with pytest.raises(ValueError, match="truncate"):
                make_compactor(name, Path(tmp))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), THRESHOLDS, st.integers(1, 8))
def test_the_window_is_always_api_valid_and_accounts_for_every_drop(history, limits, keep):
    with tempfile.TemporaryDirectory() as tmp:
        engine = SlidingWindow(Path(tmp), limits)
        out = asyncio.run(engine.prepare(history, "go"))
        assert validate_pairs(out, allow_pending=False) == []
        safe_cuts = [c for c in range(1, len(history)) if not has_tool_result(history[c])]
        if json_chars(history) > limits.context_limit and safe_cuts:
            assert out != history
        if out != history:
            cut = len(history) - (len(out) - 1)
            assert out[1:] == history[cut:] and cut in safe_cuts
            assert window_start(history, limits.context_limit) == cut
            # it fits, or nothing newer could have been cut (one batch over the limit)
            assert json_chars(out) <= limits.context_limit or cut == safe_cuts[-1]
            older = [c for c in safe_cuts if c < cut]
            if older and json_chars(out) <= limits.context_limit:  # and it keeps the most
                wider = [dropped_marker(older[-1]), *history[older[-1]:]]
                assert json_chars(wider) > limits.context_limit
        kept = {b["tool_use_id"] for _, _, b in iter_tool_results(out)}
        gone = [b["tool_use_id"] for _, _, b in iter_tool_results(history)
                if b["tool_use_id"] not in kept]
        assert [x["tool_use_id"] for x in engine.ledger] == gone
        assert all(x["where"] == "lost" for x in engine.ledger)
        tail = asyncio.run(SlidingWindow(Path(tmp), limits.replace(reactive_keep=keep))
                           .reactive(history, "go"))
        assert validate_pairs(tail, allow_pending=False) == []


# -- the strategy table and the metrics -----------------------------------------------------


def test_parse_strategies_keeps_order_and_refuses_unknown_names():
    assert [s.name for s in parse_strategies("compact+memory, truncate,truncate")] == [
        "compact+memory", "truncate"]
    with pytest.raises(CompareError, match="truncate, compact, compact\\+memory"):
        parse_strategies("truncate,bogus")
    with pytest.raises(CompareError):
        parse_strategies(" , ")


def test_every_strategy_is_a_manager_ctxlab_runs_and_runoptions_fields():
    fields = set(RunOptions.__dataclass_fields__) - {"compaction"}  # the manager says that
    for strategy in STRATEGIES.values():
        assert set(strategy.options) <= fields, strategy.name
        assert strategy.manager in ENGINES, strategy.name


def test_side_work_counts_each_operation_once_whoever_answered():
    events = [
        ModelRequest(purpose="summary", chars=1, est_tokens=1, messages=1),  # a model summary
        Stage(stage="compact_history", before_chars=2, after_chars=1, before_messages=2,
              after_messages=1),
        Stage(stage="reactive_compact", before_chars=2, after_chars=1, before_messages=2,
              after_messages=1),  # an offline summary: no model_request
        Stage(stage="micro_compact", before_chars=2, after_chars=1, before_messages=2,
              after_messages=2),  # not side work
        MemorySelected(files=(), method="keyword"),
        TurnEnd(chars=1), TurnEnd(chars=1),
        ModelRequest(purpose="main", chars=1, est_tokens=1, messages=1),
    ]
    assert side_work(events, memory=True) == {"summary": 2, "select": 1, "extract": 2,
                                              "consolidate": 0}
    assert side_work(events, memory=False)["extract"] == 0


def test_a_new_strategy_is_one_row(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    row = Strategy("compact-no-memory", Manager.PIPELINE, "a row added in a test",
                   {"memory": False, "pinned": False})
    result = asyncio.run(run_strategy(find_scenario("long-chat"), row))
    assert result.ok and result.name == "compact-no-memory" and result.calls > 0
    assert result.to_json()["manager"] == "ctxlab"
    assert list(tmp_path.iterdir()) == []  # the temporary workspace is gone


def test_each_strategy_plays_in_its_own_fresh_workspace(tmp_path, monkeypatch):
    seen: list[Path] = []
    real = AgentSession.run

    async def spy(self: AgentSession) -> bool:
        seen.append(self.options.workspace)
        assert not self.options.workspace.exists()  # fresh: generated from the scenario
        return await real(self)

    monkeypatch.setattr(AgentSession, "run", spy)
    compare_sync(find_scenario("long-chat"), parse_strategies("truncate,compact"))
    assert len(set(seen)) == 2 and Path.cwd() not in seen


# -- the course's story ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def story() -> dict[str, object]:
    result = compare_sync(find_scenario("refactor-auth"),
                          parse_strategies("truncate,compact,compact+memory"))
    return {s.name: s for s in result.strategies}


def test_truncation_loses_more_and_forgets_more_than_compact_plus_memory(story):
    truncate, memory = story["truncate"], story["compact+memory"]
    assert truncate.ok and memory.ok
    assert truncate.losses > memory.losses == 0
    assert len(truncate.probes) == len(memory.probes) >= 2
    assert truncate.probes_failed > memory.probes_failed


def test_summaries_of_summaries_keep_the_early_preference_the_window_does_not(story):
    """Each summary folds the previous one's facts in, so the first request's "always tabs"
    survives three summaries; the sliding window drops it with the messages."""
    def tabs(name: str) -> bool:
        return next(p.answerable for p in story[name].probes if p.expect == "tabs")

    assert tabs("compact") and tabs("compact+memory") and not tabs("truncate")


def test_the_metrics_are_consistent(story):
    for result in story.values():
        assert result.calls == len(result.chars_per_call) > 0
        assert result.peak_chars == max(result.chars_per_call)
        assert result.mean_chars == round(sum(result.chars_per_call) / result.calls)
        assert result.side_calls == sum(result.side_work.values())
    assert story["truncate"].side_calls == 0  # no summary, no memory: nothing on the side
    assert story["compact"].side_work["summary"] > 0
    assert story["compact+memory"].side_calls > story["compact"].side_calls
    # the window cannot shrink the big log batch that s08's budget persisted
    assert story["truncate"].peak_chars > story["compact+memory"].peak_chars


def test_the_json_shape(story):
    data = json.loads(json.dumps(story["truncate"].to_json()))
    assert {"name", "peak_chars", "mean_chars", "calls", "side_calls", "losses",
            "probes"} <= set(data)
    assert {"ask", "expect", "answerable"} <= set(data["probes"][0])


def test_pinned_context_answers_what_the_summaries_lost():
    """compact+memory+pinned: the pinned CTXLAB.md keeps the rule the summaries dropped."""
    from core.compare import compare_sync, parse_strategies
    from core.scenarios import find_scenario

    result = compare_sync(find_scenario("long-migration"),
                          parse_strategies("compact+memory,compact+memory+pinned"))
    plain, pinned = result.strategies
    assert sum(p.answerable for p in pinned.probes) > sum(p.answerable for p in plain.probes)
    assert all(p.answerable for p in pinned.probes) and pinned.losses == 0


def test_a_stand_in_summary_note_is_true_of_a_manager_that_summarises_itself():
    """``api-compaction`` writes summaries of its own; what it lacks is an answer to the
    compact tool, so its note must not say it writes none."""
    (note,) = summary_notes(Manager.API_COMPACT, {"manual_compact": 1})
    assert note == ("1 summary: the model called the compact tool, which ctxlab's summary "
                    "answers (api-compact has no answer of its own)")
