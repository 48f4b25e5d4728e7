"""Load: a long headless run with megabyte results completes, and stays within its limits.

The smaller sibling of ``bench/bench_load.py`` (200 turns): 40 scripted requests, every
fifth reading the 1.2 MB sample log, played by ``python -m tui run --headless --json`` in a
child process whose own peak RSS is measured.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from bench.bench_load import CONTEXT_LIMIT, RSS_TARGET_MB, play, scenario_text
from core.config import Thresholds
from core.measure import json_chars
from core.scenarios.model import parse_scenario
from core.sources.agent.session import AgentSession, RunOptions

TURNS = 40


@pytest.mark.slow
def test_a_40_turn_run_with_megabyte_reads_completes_within_the_context_limit(capsys):
    result = play(TURNS)
    with capsys.disabled():
        print(f"\n[load] {TURNS} turns: {result.wall_s:.1f} s, peak RSS "
              f"{result.peak_rss_mb:.0f} MB, largest main request {result.max_main_chars:,} "
              f"chars, stages {result.stages}")
    assert result.exit_code == 0, result.stderr
    assert result.ok and result.stderr == ""
    assert result.main_requests == 2 * TURNS  # one call with the tool, one with the answer
    assert result.over_limit == 0 and result.max_main_chars <= CONTEXT_LIMIT
    assert result.stages["tool_result_budget"] == TURNS // 5  # every 1.2 MB read persisted
    assert result.stages.get("snip_compact", 0) > 0  # the history passed 50 messages
    assert result.peak_rss_mb < RSS_TARGET_MB


def test_the_uncompacted_history_does_not_hold_persisted_megabytes_in_memory():
    scenario = parse_scenario(scenario_text(30), "load-30")
    with tempfile.TemporaryDirectory() as tmp:
        runner = AgentSession(RunOptions(workspace=Path(tmp) / "ws", scenario=scenario),
                        lambda event: None)
        assert asyncio.run(runner.run())
        agent = runner.agent
        assert agent is not None
        persisted = len(agent.compactor.archive.manifest())
        held = json_chars(agent.full_history)
    assert persisted == 6  # six 1.2 MB reads, each saved byte-exact on disk
    # bounded by the context, not by what the tools ever returned (6 × 1.2 MB here)
    assert held <= 4 * Thresholds().context_limit, held
