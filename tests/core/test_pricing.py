"""Prices from the editable table, the cache estimate, and what compare reports from them."""

from __future__ import annotations

import pytest

from core.compare import compare_sync, parse_strategies
from core.config import ConfigError
from core.pricing import load_prices, money
from core.scenarios import find_scenario
from core.sources.agent.cache_estimate import PrefixCache
from core.usage import Usage

USAGE = {"input_tokens": 1_000, "output_tokens": 500, "cache_creation_input_tokens": 3_000,
         "cache_read_input_tokens": 6_000,
         "cache_creation": {"ephemeral_5m_input_tokens": 2_000, "ephemeral_1h_input_tokens": 1_000},
         "iterations": [{"type": "compaction", "input_tokens": 10_000, "output_tokens": 800,
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                        {"type": "message", "input_tokens": 1_000, "output_tokens": 500,
                         "cache_creation_input_tokens": 3_000, "cache_read_input_tokens": 6_000}]}


def test_usage_is_priced_by_kind_and_the_compaction_step_is_added():
    tokens = Usage.from_api(USAGE)
    assert tokens is not None
    assert tokens.billed() == Usage(input=11_000, cache_write_5m=2_000, cache_write_1h=1_000,
                                    cache_read=6_000, output=1_300)
    price = load_prices().find("claude-sonnet-4-6")
    assert price is not None
    expected = (11_000 * 3 + 2_000 * 3.75 + 1_000 * 6 + 6_000 * 0.3 + 1_300 * 15) / 1e6
    assert price.cost(tokens) == pytest.approx(expected)
    assert tokens.cache_share == pytest.approx(6_000 / 20_000)


def test_a_dated_model_id_finds_its_family_and_an_unknown_model_has_no_price():
    table = load_prices()
    assert table.find("claude-sonnet-4-5-20250929").model == "claude-sonnet-4-5"
    assert table.find("claude-test") is None and money(None) == "—"


def test_a_workspace_can_override_and_add_prices():
    table = load_prices({"prices": {"claude-sonnet-4-6": {"input": 2.0},
                                    "my-model": {"input": 1.0, "output": 2.0,
                                                 "cache_read": 0.05}}})
    assert table.find("claude-sonnet-4-6").cache_read == pytest.approx(0.2)
    assert table.find("my-model").cache_read == 0.05
    with pytest.raises(ConfigError, match="needs numbers input and output"):
        load_prices({"prices": {"broken": {"input": "cheap"}}})


def test_the_prefix_cache_reads_an_unchanged_front_and_writes_the_rest():
    cache = PrefixCache()
    first = [{"role": "user", "content": "a" * 400}]
    assert cache.observe("sys", [], first).read == 0
    second = [*first, {"role": "assistant", "content": "b" * 400}]
    split = cache.observe("sys", [], second)
    assert split.read > 100 and split.write < split.read
    rewritten = [{"role": "user", "content": "[summary]"}, second[1]]
    assert cache.observe("sys", [], rewritten).read < 10  # only tools + system
    assert cache.observe("other", [], rewritten).read == 0  # a changed system: nothing
    assert PrefixCache(enabled=False).observe("sys", [], first).write == 0


def test_compare_reports_billed_input_cache_share_and_cost():
    result = compare_sync(find_scenario("refactor-auth"), parse_strategies("truncate,compact"))
    truncate, compact = result.strategies
    for s in (truncate, compact):
        assert s.billed_input_tokens > 0 and 0 < s.cache_read_share < 1
        assert s.est_cost is not None and s.est_cost > 0
        assert s.to_json()["billed_input_tokens"] == s.billed_input_tokens
    # the sliding window rewrites the front of the history on every cut: fewer cache reads
    assert compact.cache_read_share > truncate.cache_read_share


def test_a_changing_work_log_after_the_breakpoint_keeps_the_system_cached():
    cache = PrefixCache()
    history = [{"role": "user", "content": "a" * 400}]
    cache.observe("rules\n\nlog 1", [], history, stable=5)
    split = cache.observe("rules\n\nlog 2", [], [*history, {"role": "user", "content": "b"}],
                          stable=5)
    assert 0 < split.read < 10  # tools + rules only: the history's prefix holds the log
    same = cache.observe("rules\n\nlog 2", [], [*history, {"role": "user", "content": "b"},
                                                 {"role": "user", "content": "c"}], stable=5)
    assert same.read > 100  # log unchanged: the whole previous request is read back
