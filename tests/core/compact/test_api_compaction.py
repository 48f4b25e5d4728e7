"""The API's server compaction played offline: when it fires, what it keeps, what it saves,
and whose summary it uses."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.compact.api_compaction import ApiCompaction
from core.compact.stages import API_COMPACTION, summary_stages
from core.compact.summarizer import offline_summary
from core.compact.summary_facts import embedded_summary, is_summary_message
from core.compare import side_work
from core.events import Recorder, Stage
from core.measure import json_chars
from core.messages import iter_tool_results, validate_pairs
from tests.core.compact.builders import assistant, result, results, turns, use, user
from tests.core.compact.test_properties import histories


def engine(tmp_path: Path, trigger: int, **options) -> tuple[ApiCompaction, Recorder]:
    recorder = Recorder()
    return ApiCompaction(tmp_path, emit=recorder, trigger_tokens=trigger, **options), recorder


def prepared(compactor: ApiCompaction, messages: list[dict]) -> list[dict]:
    return asyncio.run(compactor.prepare(messages, "refactor"))


def test_it_fires_only_above_the_trigger_in_tokens_at_the_given_ratio_and_overhead(tmp_path):
    messages = turns(4, size=500)
    tokens = round(json_chars(messages) / 3.0) + 700  # the request's input tokens
    at, _ = engine(tmp_path / "at", tokens, chars_per_token=3.0, overhead_tokens=700)
    assert prepared(at, messages) == messages  # at the trigger: not above it
    above, recorder = engine(tmp_path / "above", tokens - 1, chars_per_token=3.0,
                             overhead_tokens=700)
    after = prepared(above, messages)
    assert len(after) == 3 and is_summary_message(after[0])
    (stage,) = recorder.of(Stage)
    assert (stage.stage, stage.by) == (API_COMPACTION.name, "api-compact")
    # the default ratio (4) and no overhead would not have fired there
    plain, _ = engine(tmp_path / "plain", tokens - 1)
    assert prepared(plain, messages) == messages


def test_the_latest_turn_stays_after_the_summary_and_the_rest_is_archived_byte_exact(
        tmp_path):
    compactor, recorder = engine(tmp_path, 10)
    messages = turns(3, size=200)
    after = prepared(compactor, messages)
    assert after[1:] == messages[-2:] and after[1] is messages[-2]  # tool use + its result
    (stage,) = recorder.of(Stage)
    (transcript,) = stage.files
    lines = (tmp_path / transcript).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == messages[:-2]
    replaced = [b["tool_use_id"] for _, _, b in iter_tool_results(messages[:-2])]
    assert [(e["tool_use_id"], e["where"]) for e in stage.ledger] == \
        [(tid, transcript) for tid in replaced]
    assert stage.after_chars == json_chars(after)


def test_the_callers_summary_is_used_when_it_has_one(tmp_path):
    seen: list[list[dict]] = []

    def recorded(history: list[dict]) -> str:
        seen.append(history)
        return "what the recorded agent wrote"

    compactor, _ = engine(tmp_path, 10, summary_text=recorded)
    messages = turns(3, size=200)
    after = prepared(compactor, messages)
    assert embedded_summary(after[0]) == "what the recorded agent wrote"
    assert seen == [messages[:-2]]  # given exactly the history it replaces


def test_without_one_ctxlabs_offline_summarizer_writes_it(tmp_path):
    messages = turns(3, size=200)
    expected = offline_summary(messages[:-2], "refactor", 12, "")
    for summary_text in (None, lambda history: None):
        compactor, _ = engine(tmp_path, 10, summary_text=summary_text)
        assert embedded_summary(prepared(compactor, messages)[0]) == expected


def test_a_compaction_counts_as_a_side_call_like_every_summary(tmp_path):
    compactor, recorder = engine(tmp_path, 10)
    prepared(compactor, turns(3, size=200))
    assert API_COMPACTION.name in summary_stages()
    assert side_work(recorder.events, memory=False)["summary"] == 1


def test_a_summary_and_the_latest_turn_alone_are_not_summarised_again(tmp_path):
    compactor, recorder = engine(tmp_path, 10)
    first = prepared(compactor, turns(3, size=200))
    assert prepared(compactor, first) == first  # still over the trigger: nothing new to fold
    grown = [*first, assistant(use("n")), results(result("n", "x" * 300))]
    again = prepared(compactor, grown)
    assert len(recorder.of(Stage)) == 2 and again[1:] == grown[-2:]


def test_a_new_prompt_after_a_reply_stays_with_that_reply(tmp_path):
    messages = [*turns(2, size=300), assistant(text="done"), user("now the tests")]
    after = prepared(engine(tmp_path, 10)[0], messages)
    assert after[1:] == [assistant(text="done"), user("now the tests")]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), st.integers(0, 20_000), st.sampled_from([2.5, 4.0]))
def test_compaction_never_splits_a_pair_and_keeps_the_tail_as_it_was(history, trigger, ratio):
    with tempfile.TemporaryDirectory() as tmp:
        compactor, recorder = engine(Path(tmp), trigger, chars_per_token=ratio)
        after = prepared(compactor, history)
        assert validate_pairs(after) == []
        if recorder.of(Stage):
            assert is_summary_message(after[0])
            assert after[1:] == history[len(history) - len(after) + 1:]
        else:
            assert after == history
