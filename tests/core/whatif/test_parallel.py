"""The strategies side by side in processes: the same comparison as one after the other,
with the progress told in the caller's process, a strategy's failure in its own row, and a
raising progress callback stopping every worker."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from pathlib import Path

import pytest

from bench.sessions import claude_code_session
from core.compact.truncate import SlidingWindow
from core.sources.replay import load_recording
from core.sources.replay.model import Recording
from core.whatif import parallel
from core.whatif.run import compare_session
from core.whatif.strategies import STRATEGIES, WhatIfOptions

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="a patch reaches the workers only through fork")


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    path = tmp_path_factory.mktemp("parallel") / "session.jsonl"
    path.write_text(claude_code_session(400_000), encoding="utf-8")
    return load_recording(path)


def test_side_by_side_is_the_same_comparison(recording: Recording) -> None:
    one = compare_session(recording, WhatIfOptions(processes=1))
    two = compare_session(recording, WhatIfOptions(processes=2))
    assert [s.name for s in two.strategies] == list(STRATEGIES)
    assert all(s.error is None for s in two.strategies)
    assert two.to_json() == one.to_json()


def test_progress_is_told_here_for_every_request_in_order(recording: Recording) -> None:
    told: dict[str, list[int]] = {}
    here = os.getpid()

    def progress(name: str, request: int, total: int) -> None:
        assert os.getpid() == here and total == len(recording.exchanges)
        told.setdefault(name, []).append(request)

    compare_session(recording, WhatIfOptions(processes=2, progress=progress))
    assert set(told) == set(STRATEGIES)
    assert all(seen == list(range(1, len(recording.exchanges) + 1)) for seen in told.values())


@needs_fork
def test_a_failing_strategy_is_its_own_row(recording: Recording,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: SlidingWindow, messages: list[dict], request: str) -> list[dict]:
        raise RuntimeError("the window broke")

    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    monkeypatch.setattr(SlidingWindow, "prepare", broken)
    whatif = compare_session(recording, WhatIfOptions(processes=2))
    failed = whatif.strategy("truncate")
    assert failed is not None and failed.error == "RuntimeError: the window broke"
    assert [s.name for s in whatif.strategies if s.error is None] == [
        n for n in STRATEGIES if n != "truncate"]


def test_a_raising_progress_stops_the_workers(recording: Recording, tmp_path: Path) -> None:
    """The workbench's screen raises ``CancelledError`` from the callback once it is left:
    the comparison stops with it instead of running every strategy to the end."""
    told: list[tuple[str, int]] = []

    def progress(name: str, request: int, total: int) -> None:
        told.append((name, request))
        if len(told) == 5:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        compare_session(recording, WhatIfOptions(processes=2, progress=progress,
                                                 workdir=tmp_path))
    assert len(told) == 5


def test_automatic_runs_a_short_session_here() -> None:
    names = tuple(STRATEGIES)
    assert parallel.worker_count(names, 10, None) == 1
    assert parallel.worker_count(("s08",), 5_000, None) == 1
    assert parallel.worker_count(names, 5_000, None) == min(len(names), os.cpu_count() or 1)
    assert parallel.worker_count(names, 10, 3) == 3
    assert parallel.worker_count(("s08", "truncate"), 10, 8) == 2


def test_the_slowest_strategies_start_first() -> None:
    assert parallel.by_cost(["original", "truncate", "s08-window"]) == [
        "s08-window", "truncate", "original"]
