"""Replay: importing a real-shaped Claude Code session, replaying it, cost per MB.

Sessions come from :mod:`bench.sessions` (the real line shapes: assistant messages split
over lines, tool results with their ``toolUseResult`` copy, progress lines, auto-compact
boundaries). Rows:

* **import** of a 3.5 MB, ~1,500-line session (best of 3) — target < 1 s;
* **headless replay** of it in a real process (``python -m tui replay PATH --headless
  --json`` to /dev/null: interpreter start, import, the pipeline on every request, every
  event printed) — target < 5 s;
* **cost per MB** of import and of an in-process replay at 1, 3, 10 and 30 MB, in CPU time
  (the process's, worker threads included: on a shared machine wall time mostly measures
  the neighbours); the ratio is against the 1 MB session, and the cost must stay flat
  (max ÷ min under ``FLAT_SPREAD``).

Run: ``python bench/bench_replay.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sessions import write_session
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource

ROOT = Path(__file__).resolve().parents[1]
HEADLINE_BYTES = 3_500_000
IMPORT_TARGET_S = 1.0
REPLAY_TARGET_S = 5.0
SIZES_MB = (1, 3, 10, 30)
FLAT_SPREAD = 1.5
MB = 1_000_000

Row = dict[str, Any]


def time_import(path: Path, repeat: int = 3, clock=time.perf_counter) -> float:
    """Best time of ``repeat`` imports, each until the recording is returned (freeing it
    afterwards is not part of importing: it was timed too, by accident, until 2026-12-03)."""
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        recording = load_recording(path, max_bytes=100 * MB)
        best = min(best, clock() - start)
        del recording
    return best


def time_replay(path: Path, workdir: Path) -> float:
    """CPU seconds of import + replay in this process, events discarded."""
    start = time.process_time()
    recording = load_recording(path, max_bytes=100 * MB)
    ok = asyncio.run(ReplaySource(recording, ReplayOptions(workdir=workdir, seekable=False)).run(
        lambda event: event))
    if not ok:
        raise RuntimeError(f"the replay of {path} failed")
    return time.process_time() - start


def time_cli(path: Path, workdir: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tui", "replay", str(path), "--headless", "--json",
                    "--workdir", str(workdir)], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    return time.perf_counter() - start


def _row(name: str, value: float, unit: str, target: Any = None, baseline: Any = None,
         ok: bool = True) -> Row:
    ratio = round(value / baseline, 2) if baseline else None
    return {"name": name, "value": value, "unit": unit, "target": target,
            "baseline": baseline, "ratio": ratio, "ok": ok}


def run() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-replay-") as tmp:
        root = Path(tmp)
        head = root / "headline"
        head.mkdir()
        path = write_session(head, HEADLINE_BYTES)
        lines = path.read_text(encoding="utf-8").count("\n")
        size = path.stat().st_size / MB
        seconds = time_import(path)
        rows.append(_row(f"import {size:.1f} MB Claude Code session ({lines:,} lines)",
                         seconds, "s", IMPORT_TARGET_S, ok=seconds < IMPORT_TARGET_S))
        seconds = time_cli(path, root / "cli")
        rows.append(_row(f"ctxlab replay --headless --json, {size:.1f} MB (a real process)",
                         seconds, "s", REPLAY_TARGET_S, ok=seconds < REPLAY_TARGET_S))
        per_mb: dict[str, list[float]] = {"import": [], "replay": []}
        for mb in SIZES_MB:
            folder = root / f"s{mb}"
            folder.mkdir()
            sized = write_session(folder, mb * MB)
            actual = sized.stat().st_size / MB
            per_mb["import"].append(time_import(sized, 3, time.process_time) * 1000 / actual)
            per_mb["replay"].append(time_replay(sized, folder / "w") * 1000 / actual)
            sized.unlink()
        for kind, values in per_mb.items():
            for mb, value in zip(SIZES_MB, values, strict=True):
                rows.append(_row(f"{kind} CPU per MB at {mb} MB", round(value, 1), "ms",
                                 baseline=round(values[0], 1)))
            spread = max(values) / min(values)
            rows.append(_row(f"{kind} CPU per MB, max ÷ min over {SIZES_MB[0]}–"
                             f"{SIZES_MB[-1]} MB", round(spread, 2), "×", FLAT_SPREAD,
                             ok=spread < FLAT_SPREAD))
    return rows


if __name__ == "__main__":
    for row in run():
        mark = "ok" if row["ok"] else "MISSED"
        print(f"{row['name']:<60} {row['value']!s:>10} {row['unit']:<3} {mark}")
