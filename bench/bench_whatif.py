"""What if: a 30 MB real-shaped Claude Code session compared under all seven strategies.

Rows, in CPU time (the process's, worker threads included: on a shared machine wall time
mostly measures the neighbours):

* **the whole comparison** (``core.whatif.run.compare_session``, every strategy, a
  temporary workdir) — target < 30 s; its baseline is the plain headless replay of the same
  file (import + ctxlab's pipeline beside the recording, events discarded), measured in the
  same run;
* **each strategy alone**, so a slow one is named.

Run: ``python bench/bench_whatif.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import sys
import tempfile
import time
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


def time_compare(path: Path, strategies: tuple[str, ...]) -> float:
    """CPU seconds of import + the comparison."""
    start = time.process_time()
    compare_session(load_recording(path, max_bytes=100 * MB),
                    WhatIfOptions(strategies=strategies))
    return time.process_time() - start


def _row(name: str, value: float, target: Any = None, baseline: float | None = None,
         ok: bool = True) -> Row:
    ratio = round(value / baseline, 2) if baseline else None
    return {"name": name, "value": round(value, 2), "unit": "s", "target": target,
            "baseline": None if baseline is None else round(baseline, 2), "ratio": ratio,
            "ok": ok}


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-whatif-") as tmp:
        folder = Path(tmp)
        path = write_session(folder, SESSION_MB * MB)
        size = path.stat().st_size / MB
        replay = time_replay(path, folder / "replay")
        whole = time_compare(path, tuple(STRATEGIES))
        rows = [_row(f"what-if, {size:.0f} MB session, all {len(STRATEGIES)} strategies "
                     "(CPU)", whole, TARGET_S, replay, ok=whole < TARGET_S)]
        for name in STRATEGIES:
            rows.append(_row(f"what-if, {size:.0f} MB session, {name} alone (CPU)",
                             time_compare(path, (name,)), baseline=replay))
    return rows


if __name__ == "__main__":
    for row in run():
        mark = "ok" if row["ok"] else "MISSED"
        print(f"{row['name']:<60} {row['value']!s:>8} {row['unit']:<2} "
              f"(replay {row['baseline']} s) {mark}")
