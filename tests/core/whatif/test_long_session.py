"""A long session in Claude Code's real shape — hundreds of requests, several of the agent's
own compactions — compared under every strategy: each runs to the end, and every total is
what its requests add up to, so a reader can check the table against the rows."""

from __future__ import annotations

import pytest

from bench.sessions import write_session
from core.sources.replay import load_recording
from core.usage import Usage
from core.whatif.run import compare_session
from core.whatif.strategies import STRATEGIES, WhatIfOptions

SIZE = 2_500_000  # bytes: about 330 requests and three compactions


@pytest.fixture(scope="module")
def whatif(tmp_path_factory):
    path = write_session(tmp_path_factory.mktemp("long"), SIZE)
    recording = load_recording(path)
    assert len(recording.exchanges) >= 300 and len(recording.compactions) >= 3
    return compare_session(recording, WhatIfOptions())


def test_every_strategy_runs_to_the_end(whatif):
    assert [s.name for s in whatif.strategies] == list(STRATEGIES)
    for run in whatif.strategies:
        assert run.error is None, (run.name, run.error)
        assert [r.index for r in run.requests] == list(range(1, whatif.requests + 1))


def test_each_total_is_the_sum_of_its_requests_and_the_peak_their_maximum(whatif):
    data = whatif.to_json()
    for run, shown in zip(whatif.strategies, data["strategies"], strict=True):
        rows = shown["per_request"]
        side = run.side.billed()
        assert shown["input_tokens"] == sum(r["input"] for r in rows) + side.input
        assert shown["cache_write_tokens"] == (sum(r["cache_write"] for r in rows)
                                               + side.cache_write)
        assert shown["cache_read_tokens"] == sum(r["cache_read"] for r in rows) + side.cache_read
        assert shown["output_tokens"] == sum(r["output"] for r in rows) + side.output
        assert shown["billed_input_tokens"] == (shown["input_tokens"]
                                                + shown["cache_write_tokens"]
                                                + shown["cache_read_tokens"])
        assert shown["peak_tokens"] == max(r["tokens"] for r in rows)
        if run.side_calls == 0:
            assert run.side == Usage()  # no side call, nothing billed beside the requests


def test_the_strategies_that_compact_do_so_on_a_long_session(whatif):
    """Past 160,000 tokens the recorded agent compacted; the API's editing (trigger 100,000)
    and compaction (150,000) must fire too, and the original's compactions are its own."""
    by_name = {run.name: run for run in whatif.strategies}
    assert by_name["api-clear-tool-uses"].compactions >= 1
    assert by_name["api-compaction"].compactions >= 1
    assert by_name["original"].compactions >= 3
