"""Observation masking keeps the last turns' results whole, saves the rest, and changes only
what must change: a prefix-cache model and a what-if run rely on both."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.archive.store import content_as_text
from core.compact.observation_masking import MASK_PREFIX, ObservationMasking, is_masked
from core.compact.stages import OBSERVATION_MASK
from core.events import Recorder, Stage
from core.measure import json_chars
from core.messages import blocks, iter_tool_results, validate_pairs
from tests.core.compact.builders import assistant, result, results, turns, use
from tests.core.compact.test_properties import histories


def engine(tmp_path: Path, keep: int = 3) -> tuple[ObservationMasking, Recorder]:
    recorder = Recorder()
    return ObservationMasking(tmp_path, emit=recorder, keep=keep), recorder


def prepared(compactor: ObservationMasking, messages: list[dict]) -> list[dict]:
    return asyncio.run(compactor.prepare(messages, "refactor"))


def contents(messages: list[dict]) -> list:
    return [block["content"] for _, _, block in iter_tool_results(messages)]


def saved(tmp_path: Path, masked: str) -> str:
    """The file a placeholder names, read back."""
    path = masked.removeprefix(MASK_PREFIX).removesuffix("]")
    return (tmp_path / path).read_text(encoding="utf-8")


def test_exactly_the_last_keep_turns_stay_whole_the_rest_name_their_saved_originals(
        tmp_path):
    compactor, recorder = engine(tmp_path, keep=3)
    messages = turns(6, per_turn=1, size=300)
    after = prepared(compactor, messages)
    before, now = contents(messages), contents(after)
    assert now[3:] == before[3:]  # the three newest, whole
    assert all(is_masked(c) for c in now[:3])
    for original, masked in zip(before[:3], now[:3], strict=True):
        assert saved(tmp_path, masked) == content_as_text(original)  # byte-exact
    (stage,) = recorder.of(Stage)
    assert (stage.stage, stage.by) == (OBSERVATION_MASK.name, "observation-masking")
    assert stage.tool_use_ids == ("t0_0", "t1_0", "t2_0")
    assert [tmp_path / e["where"] for e in stage.ledger] == \
        [tmp_path / c.removeprefix(MASK_PREFIX).removesuffix("]") for c in now[:3]]
    assert len(after) == len(messages)  # nothing dropped, nothing summarised


def test_it_applies_on_every_prepare_whatever_the_size_and_not_below_keep(tmp_path):
    compactor, recorder = engine(tmp_path, keep=10)
    few = turns(10, size=10)
    assert prepared(compactor, few) == few  # ten turns: all kept, no stage
    assert recorder.of(Stage) == []
    more = prepared(compactor, turns(11, size=10))  # one more, tiny as it is
    assert is_masked(contents(more)[0]) and not any(map(is_masked, contents(more)[1:]))


def test_a_batch_of_parallel_results_is_one_turn_and_none_is_masked_before_it_was_seen(
        tmp_path):
    """Claude Code reads files in parallel: three results answering one message are one
    turn, so keep=2 leaves all three whole for the request that first sends them."""
    compactor, recorder = engine(tmp_path, keep=2)
    batch = turns(1, per_turn=3, size=50)
    assert prepared(compactor, batch) == batch
    assert recorder.of(Stage) == []


def test_keep_counts_turns_and_masks_every_result_of_an_old_turn(tmp_path):
    compactor, recorder = engine(tmp_path, keep=2)
    after = prepared(compactor, turns(3, per_turn=3, size=50))
    assert [is_masked(c) for c in contents(after)] == [True] * 3 + [False] * 6
    (stage,) = recorder.of(Stage)
    assert stage.tool_use_ids == ("t0_0", "t0_1", "t0_2")


def test_the_latest_turn_is_never_masked_even_at_keep_0(tmp_path):
    compactor, _ = engine(tmp_path, keep=0)
    after = prepared(compactor, turns(2, per_turn=2, size=50))
    assert [is_masked(c) for c in contents(after)] == [True, True, False, False]


def test_unchanged_messages_keep_their_identity_across_prepare_calls(tmp_path):
    """A prefix-cache model compares by identity first: only the message whose result just
    became old is a new dict; what was masked before stays the very same object."""
    compactor, _ = engine(tmp_path, keep=2)
    first = prepared(compactor, turns(4, size=50))  # results t0, t1 masked (messages 2, 4)
    grown = [*first, assistant(use("n1"), text="more"), results(result("n1", "fresh"))]
    second = prepared(compactor, grown)
    changed = [i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a is not b]
    assert changed == [6]  # t2's message, the one newly old; t0's and t1's untouched
    assert second[6] is not grown[6] and not is_masked(contents([grown[6]])[0])  # not mutated
    assert second[-2] is grown[-2] and second[-1] is grown[-1]
    third = prepared(compactor, [*second, assistant(text="done")])  # no new result
    assert all(a is b for a, b in zip(second, third, strict=False))


def test_a_history_it_did_not_return_is_read_anew_and_masks_are_not_saved_twice(tmp_path):
    compactor, recorder = engine(tmp_path, keep=1)
    first = prepared(compactor, turns(3, size=40))
    other = [dict(m) for m in first]  # equal, but not the list returned: read from the start
    again = prepared(compactor, other)
    assert contents(again) == contents(first)
    assert len(recorder.of(Stage)) == 1  # the placeholders were recognised, nothing re-masked


def test_a_caller_appending_to_the_returned_list_is_followed(tmp_path):
    """The agent loop adopts the list prepare returns and appends to it in place."""
    compactor, _ = engine(tmp_path, keep=1)
    history = prepared(compactor, turns(1, size=40))
    history += [assistant(use("n1")), results(result("n1", "new"))]
    after = prepared(compactor, history)
    assert is_masked(contents(after)[0]) and contents(after)[1] == "new"


def test_compact_falls_back_to_the_s08_summary_and_masking_starts_again(tmp_path):
    compactor, recorder = engine(tmp_path, keep=1)
    history = prepared(compactor, turns(3, size=40))
    summary = asyncio.run(compactor.compact(history, "refactor"))
    assert len(summary) == 1 and [e.stage for e in recorder.of(Stage)][-1] == "manual_compact"
    grown = [*summary, assistant(use("a")), results(result("a", "1")),
             assistant(use("b")), results(result("b", "2"))]
    assert [is_masked(c) for c in contents(prepared(compactor, grown))] == [True, False]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), st.integers(0, 12), st.integers(1, 6))
def test_masking_never_splits_a_pair_and_keeps_the_newest_keep_turns(history, keep, steps):
    """Fed in steps as an agent loop would, the result is the same as in one go."""
    with tempfile.TemporaryDirectory() as tmp:
        compactor, recorder = engine(Path(tmp), keep=keep)
        cuts = sorted({len(history) * k // steps for k in range(1, steps + 1)})
        sent: list[dict] = []
        for cut in cuts:
            fired = len(recorder.of(Stage))
            sent = prepared(compactor, [*sent, *history[len(sent):cut]])
            for stage in recorder.of(Stage)[fired:]:  # its sizes are the history's, exactly
                assert stage.after_chars == json_chars(sent)
        assert validate_pairs(sent) == []
        assert len(sent) == len(history)
        per_turn = [len(blocks(m)) for m in history  # a turn's results: one user message
                    if m["role"] == "user" and any(iter_tool_results([m]))]
        kept = sum(per_turn[max(len(per_turn) - max(keep, 1), 0):])
        whole = [not is_masked(c) for c in contents(sent)]
        assert whole == [False] * (len(whole) - kept) + [True] * kept
        for original, now in zip(contents(history), contents(sent), strict=True):
            assert now == original or saved(Path(tmp), now) == content_as_text(original)


def test_sizes_of_answers_from_the_followed_history_exactly(tmp_path):
    """The agent loop asks every call; the answer must be each message's size as sent."""
    compactor, _ = engine(tmp_path, keep=1)
    sent = prepared(compactor, turns(3, size=40))
    asked = [*sent, assistant(use("n1")), results(result("n1", "new"))]
    assert compactor.sizes_of(asked) == tuple(json_chars(m) for m in asked)
    assert compactor.sizes_of(turns(2)) == tuple(json_chars(m) for m in turns(2))
