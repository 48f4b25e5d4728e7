"""The offline ``api-clear-tool-uses`` engine follows the documented clear_tool_uses rules."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from core.compact.clear_tool_uses import PLACEHOLDER, ApiClearToolUses, ClearRule, clearable
from core.compare import compare_sync, parse_strategies
from core.config import Thresholds
from core.events import Recorder, Stage
from core.measure import Measured
from core.messages import validate_pairs
from core.scenarios import find_scenario
from core.whatif.cache import request_tokens


def history(results: list[tuple[str, int]]) -> list[dict]:
    """One tool use per (tool name, result size), after a first request."""
    messages: list[dict] = [{"role": "user", "content": "go"}]
    for n, (name, size) in enumerate(results):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{n}", "name": name, "input": {}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"{n}" * size}]})
    return messages


def engine(tmp_path, limit: int = 1_000, keep: int = 3, exclude=()) -> ApiClearToolUses:
    recorder = Recorder()
    thresholds = Thresholds(context_limit=limit, keep_recent=keep, snip_head=1,
                            max_messages=3)
    compactor = ApiClearToolUses(tmp_path, thresholds, emit=recorder, exclude_tools=exclude)
    compactor.recorder = recorder
    return compactor


def prepared(compactor: ApiClearToolUses, messages: list[dict]) -> list[dict]:
    return asyncio.run(compactor.prepare(messages, "go"))


def contents(messages: list[dict]) -> list[str]:
    return [b["content"] for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_result"]


def test_under_the_trigger_nothing_is_cleared(tmp_path):
    messages = history([("bash", 50)] * 5)
    assert prepared(engine(tmp_path, limit=100_000), messages) == messages


def test_over_the_trigger_all_but_the_last_keep_results_are_cleared(tmp_path):
    compactor = engine(tmp_path)
    messages = history([("bash", 400)] * 5)
    after = prepared(compactor, messages)
    assert contents(after)[:2] == [PLACEHOLDER] * 2
    assert contents(after)[2:] == contents(messages)[2:]
    (stage,) = compactor.recorder.of(Stage)
    assert stage.stage == "api_clear_tool_uses" and stage.tool_use_ids == ("t0", "t1")
    assert stage.by == "api-edit"  # the API's context editing, played offline
    for entry in stage.ledger:  # the originals are saved byte-exact, nothing is lost
        assert (tmp_path / entry["where"]).read_text() == contents(messages)[
            int(entry["tool_use_id"][1:])]
    assert stage.first_changed == 2


def test_excluded_tools_keep_their_results(tmp_path):
    messages = history([("memory", 400), ("bash", 400), ("bash", 400), ("bash", 400),
                        ("bash", 400)])
    after = prepared(engine(tmp_path, exclude=("memory",)), messages)
    assert contents(after)[0] == contents(messages)[0]
    assert contents(after)[1] == PLACEHOLDER


def test_clear_at_least_clears_nothing_rather_than_too_little(tmp_path):
    messages = history([("bash", 40)] * 4)
    assert len(clearable(messages, ClearRule(trigger_tokens=1, keep=3))) == 1
    compactor_rule = ClearRule(trigger_tokens=1, keep=3, clear_at_least=1_000)
    history_ = Measured(list(messages))
    ApiClearToolUses(tmp_path).clear(history_, compactor_rule)
    assert history_.messages == messages


def test_the_trigger_counts_what_was_cleared_as_still_sent(tmp_path):
    """The client keeps sending everything; the server measures before it edits."""
    compactor = engine(tmp_path, limit=2_400)
    messages = history([("bash", 400)] * 5)
    first = prepared(compactor, messages)
    assert contents(first)[:2] == [PLACEHOLDER] * 2
    more = first + history([("bash", 10)])[1:]  # a small new result: the sent size shrank
    more[-2]["content"][0]["id"] = more[-1]["content"][0]["tool_use_id"] = "t9"
    second = prepared(compactor, more)
    assert contents(second)[2] == PLACEHOLDER  # cleared again: the full prompt is still over


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["bash", "read_file"]), st.integers(0, 600)),
                max_size=12), st.integers(0, 4))
def test_clearing_keeps_pairs_and_the_most_recent_results(tmp_path_factory, results, keep):
    tmp = tmp_path_factory.mktemp("clear")
    messages = history(results)
    after = prepared(engine(tmp, limit=200, keep=keep), messages)
    assert validate_pairs(after, allow_pending=False) == []
    assert len(after) == len(messages)
    kept = contents(messages)[len(results) - keep:] if keep else []
    assert contents(after)[len(results) - len(kept):] == kept


def test_compare_plays_the_strategy_beside_the_others():
    result = compare_sync(find_scenario("refactor-auth"),
                          parse_strategies("api-clear-tool-uses,truncate"))
    clear, truncate = result.strategies
    assert clear.ok and clear.losses == 0 and truncate.losses > 0
    assert clear.calls == truncate.calls


def test_the_trigger_counts_tokens_at_the_given_ratio_plus_the_overhead(tmp_path):
    """A what-if run prices a session at its own chars-per-token and fixed overhead."""
    messages = history([("bash", 400)] * 5)
    chars = Measured(list(messages)).chars
    at = request_tokens(chars, 2.0, 500)  # the whole request, overhead included

    def cleared(trigger: int, **units) -> bool:
        compactor = ApiClearToolUses(tmp_path / str(trigger), Thresholds(keep_recent=3),
                                     trigger_tokens=trigger, **units)
        return contents(prepared(compactor, messages))[0] == PLACEHOLDER

    assert not cleared(at, chars_per_token=2.0, overhead_tokens=500)
    assert cleared(at - 1, chars_per_token=2.0, overhead_tokens=500)
    assert not cleared(at - 1)  # at 4 chars a token, no overhead: far under it


def test_past_the_trigger_exactly_when_the_what_if_tokens_are(tmp_path):
    """The what-if table shows request_tokens (rounded): a request it shows at the trigger
    is not past it, one token more is. Rounding up would clear a request shown at it."""
    messages = history([("bash", 400)] * 5)
    chars = Measured(list(messages)).chars
    ratio = chars / (chars // 4 + 0.25)  # a quarter token over a whole number
    shown = request_tokens(chars, ratio, 500)

    def cleared(trigger: int) -> bool:
        compactor = ApiClearToolUses(tmp_path / str(trigger), Thresholds(keep_recent=3),
                                     trigger_tokens=trigger, chars_per_token=ratio,
                                     overhead_tokens=500)
        return contents(prepared(compactor, messages))[0] == PLACEHOLDER

    assert shown == chars // 4 + 500
    assert not cleared(shown)
    assert cleared(shown - 1)


def test_without_a_trigger_the_context_limit_is_the_trigger_as_before(tmp_path):
    compactor = engine(tmp_path, limit=1_000)
    assert compactor.rule.trigger_tokens == 250  # 1,000 chars at 4 a token
    assert ApiClearToolUses(tmp_path, trigger_tokens=100_000).rule.trigger_tokens == 100_000


class _Ruled(ApiClearToolUses):
    """The engine under a rule of the test's (``clear_at_least`` included)."""

    fixed = ClearRule(trigger_tokens=0)

    @property
    def rule(self) -> ClearRule:
        return self.fixed


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["bash", "memory"]), st.integers(0, 600)),
                max_size=14), st.integers(0, 4), st.integers(1, 5), st.integers(0, 300))
def test_followed_across_calls_it_clears_what_one_pass_over_each_history_clears(
        tmp_path_factory, results, keep, steps, least):
    """prepare reads only what was appended since the history it returned; a one-pass
    clear over each whole history (clearable) must agree with it call after call."""
    messages = history(results)
    tmp = tmp_path_factory.mktemp("follow")
    followed, one_pass = _Ruled(tmp / "a"), _Ruled(tmp / "b")
    followed.fixed = one_pass.fixed = ClearRule(300, keep, least or None,
                                                frozenset({"memory"}))
    sent: list[dict] = []
    reference: list[dict] = []
    for cut in sorted({len(messages) * k // steps for k in range(1, steps + 1)}):
        sent = prepared(followed, [*sent, *messages[len(sent):cut]])
        whole = Measured([*reference, *messages[len(reference):cut]])
        one_pass.clear(whole, one_pass.rule)
        reference = whole.messages
        assert contents(sent) == contents(reference)
        assert followed.cleared_chars == one_pass.cleared_chars


def test_unchanged_messages_keep_their_identity_across_prepare_calls(tmp_path):
    compactor = engine(tmp_path, limit=400, keep=1)
    first = prepared(compactor, history([("bash", 300)] * 3))
    grown = first + history([("bash", 300)] * 4)[-2:]
    grown[-2]["content"][0]["id"] = grown[-1]["content"][0]["tool_use_id"] = "t9"
    second = prepared(compactor, grown)
    changed = [i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a is not b]
    assert changed == [6]  # only the result that just became old
