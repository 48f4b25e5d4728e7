"""What if: a 30 MB real-shaped Claude Code session compared under all seven strategies.

Rows, each in wall time and in CPU time (this process's and its finished children's: the
strategies run in worker processes):

* **the whole comparison** (``core.whatif.run.compare_session``, every strategy side by
  side, a temporary workdir) — the target is its wall time under 30 s; its baseline is the
  plain headless replay of the same file (import + ctxlab's pipeline beside the recording,
  events discarded), measured in the same run;
* **the floor**: the same file read and each line parsed once, what no comparison of it
  can go below;
* **each strategy alone** (in this process), so a slow one is named.

On a shared machine the wall time depends on what the neighbours run: the machine's load
average is printed with the rows.

Run: ``python bench/bench_whatif.py`` (``--whole``: the comparison, the replay and the floor
only); ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_replay import MB, time_replay
from bench.sessions import write_session
from core.sources.replay import load_recording
from core.whatif.run import compare_session
from core.whatif.strategies import STRATEGIES, WhatIfOptions

SESSION_MB = 30
TARGET_S = 30.0

Row = dict[str, Any]


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # this process's and its finished children's


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(work: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), _cpu()
    work()
    return Timing(time.perf_counter() - wall, _cpu() - cpu)


def floor(path: Path) -> None:
    """The file's bytes read and each of its lines parsed, once."""
    for line in path.read_bytes().splitlines():
        if line.strip():
            json.loads(line)


def compare(path: Path, strategies: tuple[str, ...], processes: int | None = None) -> None:
    """Load + the comparison, as ``ctxlab compare --session`` runs it."""
    compare_session(load_recording(path, max_bytes=100 * MB),
                    WhatIfOptions(strategies=strategies, processes=processes))


def _row(name: str, value: float, target: Any = None, baseline: float | None = None,
         ok: bool = True) -> Row:
    ratio = round(value / baseline, 2) if baseline else None
    return {"name": name, "value": round(value, 2), "unit": "s", "target": target,
            "baseline": None if baseline is None else round(baseline, 2), "ratio": ratio,
            "ok": ok}


def run(alone: bool = True) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-whatif-") as tmp:
        folder = Path(tmp)
        path = write_session(folder, SESSION_MB * MB)
        size = f"{path.stat().st_size / MB:.0f} MB session"
        base = timed(lambda: time_replay(path, folder / "replay"))
        whole = timed(lambda: compare(path, tuple(STRATEGIES)))
        least = timed(lambda: floor(path))
        every = f"what-if, {size}, all {len(STRATEGIES)} strategies"
        rows = [_row(f"{every} (wall)", whole.wall, TARGET_S, base.wall,
                     ok=whole.wall < TARGET_S),
                _row(f"{every} (CPU, every process)", whole.cpu, baseline=base.cpu),
                _row(f"plain replay, {size} (wall)", base.wall),
                _row(f"plain replay, {size} (CPU)", base.cpu),
                _row(f"floor: {size} read and parsed once (wall)", least.wall),
                _row(f"floor: {size} read and parsed once (CPU)", least.cpu)]
        if alone:
            for name in STRATEGIES:
                one = timed(lambda name=name: compare(path, (name,), processes=1))
                rows.append(_row(f"what-if, {size}, {name} alone (CPU)", one.cpu,
                                 baseline=base.cpu))
    return rows


if __name__ == "__main__":
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for row in run(alone="--whole" not in sys.argv[1:]):
        mark = "ok" if row["ok"] else "MISSED"
        against = f"(replay {row['baseline']} s)" if row["baseline"] is not None else ""
        print(f"{row['name']:<62} {row['value']!s:>8} {row['unit']:<2} {against:<20} {mark}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
