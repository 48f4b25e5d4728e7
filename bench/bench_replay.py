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
  (max ÷ min under ``FLAT_SPREAD``);
* **against the floor**: ``ctxlab replay --headless --json`` of a long conversation
  (:func:`bench.sessions.claude_code_session`) at 1, 10 and 30 MB (60 MB with
  ``CTXLAB_BENCH_REPLAY_60=1``), each in a fresh child process, against the floor measured
  the same way in the same run: ``json.loads`` of every line of the same file, the least
  any replay must do. Floor and replay alternate, their order swapped every round; the row
  is the median of the per-round ratios (CPU time, worker threads included), the best
  ratio beside it — target ≤ ``FLOOR_TARGET``×;
* **peak RSS** of that replay child (``VmHWM``) ÷ the file size, target ≤ ``RSS_TARGET``×:
  the whole peak, interpreter included (a small file cannot meet it: the interpreter and
  the CLI's imports alone are tens of MB). They are measured in the same child before the
  replay starts, and the peak above them (what the replay itself holds) is shown beside it.

Run: ``python bench/bench_replay.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rounds import per_round, rotations
from bench.sessions import claude_code_session, write_session
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource

ROOT = Path(__file__).resolve().parents[1]
HEADLINE_BYTES = 3_500_000
IMPORT_TARGET_S = 1.0
REPLAY_TARGET_S = 5.0
SIZES_MB = (1, 3, 10, 30)
FLAT_SPREAD = 1.5
MB = 1_000_000
FLOOR_SIZES_MB = (1, 10, 30)
FLOOR_ROUNDS = 3
FLOOR_TARGET = 10.0
RSS_TARGET = 3.0

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


# One measured run in a fresh process: prints {"cpu": s, "base_kb", "peak_kb"}. "floor"
# reads the file line by line and json.loads each, keeping nothing; "replay" is
# ``ctxlab replay PATH --headless --json`` with the events to /dev/null. The CLI and the
# replay's modules are imported before the baseline is read and the clock starts, in both
# kinds: the two differ only by what is timed (start-up is the "a real process" row's).
CHILD = """
import json, os, sys, time
from tui.cli import main
import core.sources.replay.source, tui.cli.cmd_replay

def hwm():
    for line in open("/proc/self/status", encoding="utf-8"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

kind, path, workdir = sys.argv[1:4]
base = hwm()
start = time.process_time()
if kind == "floor":
    with open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
else:
    with open(os.devnull, "w", encoding="utf-8") as sink:
        saved, sys.stdout = sys.stdout, sink
        try:
            code = main(["replay", path, "--headless", "--json", "--workdir", workdir,
                         "--max-mb", "100"])
        finally:
            sys.stdout = saved
    if code != 0:
        raise SystemExit(f"the replay of {path} failed ({code})")
cpu = time.process_time() - start
print(json.dumps({"cpu": cpu, "base_kb": base, "peak_kb": hwm()}))
"""


def measure_child(kind: str, path: Path, workdir: Path, code: Path = ROOT) -> dict[str, float]:
    """:data:`CHILD` run on ``code`` (a checkout of ctxlab: this one, or an older one to
    compare with)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", CHILD, "floor" if kind == "floor" else
                           "replay", str(path), str(workdir)], cwd=code, env=env, check=True,
                          capture_output=True, text=True, timeout=1800)
    return json.loads(done.stdout.splitlines()[-1])


def floor_rows(root: Path) -> list[Row]:
    """Headless replay ÷ the json.loads floor, and its peak RSS ÷ the file, per size; with
    ``CTXLAB_BENCH_REPLAY_BEFORE=DIR``, the same replay by the checkout in DIR too, in the
    same rounds (a third run in the rotation), for a before/after ratio."""
    rows: list[Row] = []
    sizes = FLOOR_SIZES_MB + ((60,) if os.environ.get("CTXLAB_BENCH_REPLAY_60") else ())
    before = os.environ.get("CTXLAB_BENCH_REPLAY_BEFORE")
    kinds = ("floor", "replay", "before") if before else ("floor", "replay")
    for mb in sizes:
        folder = root / f"floor{mb}"
        folder.mkdir()
        path = folder / "session.jsonl"
        path.write_text(claude_code_session(mb * MB), encoding="utf-8")
        size = path.stat().st_size
        runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
        for n, order in rotations(kinds, FLOOR_ROUNDS):
            for kind in order:
                work = folder / f"w{n}"
                code = Path(before) if kind == "before" and before else ROOT
                runs[kind].append(measure_child(kind, path, work, code))
                shutil.rmtree(work, ignore_errors=True)
        rows += _size_rows(size, runs)
        path.unlink()
    return rows


def _size_rows(size: int, runs: dict[str, list[dict[str, float]]]) -> list[Row]:
    def ratios(kind: str, over: str) -> tuple[float, float, float]:
        """Median, lowest and highest of the per-round CPU ratios ``kind`` ÷ ``over``."""
        return per_round([r["cpu"] for r in runs[kind]], [r["cpu"] for r in runs[over]])

    mb = f"{size / MB:.0f} MB"
    median, best, _ = ratios("replay", "floor")
    cpu = statistics.median(r["cpu"] for r in runs["replay"])
    rows = [_row(f"headless replay {mb} ÷ json.loads floor (median of {FLOOR_ROUNDS}, best "
                 f"{best:.1f}×; replay {cpu:.2f} s CPU, floor "
                 f"{statistics.median(r['cpu'] for r in runs['floor']):.3f} s)",
                 round(median, 1), "×", FLOOR_TARGET, ok=median <= FLOOR_TARGET)]
    if "before" in runs:
        was, _, most = ratios("before", "replay")
        then = statistics.median(r["cpu"] for r in runs["before"])
        rows.append(_row(f"headless replay {mb}: the older checkout ÷ this one (median, best "
                         f"{most:.1f}×; before {then:.2f} s CPU, "
                         f"÷ floor {ratios('before', 'floor')[0]:.0f}×)",
                         round(was, 1), "×"))
    for kind in ("replay", "before") if "before" in runs else ("replay",):
        peak = max(r["peak_kb"] for r in runs[kind]) * 1024
        base = min(r["base_kb"] for r in runs[kind]) * 1024
        held, whole = (peak - base) / size, peak / size
        who = "headless replay" if kind == "replay" else "older checkout's replay"
        rows.append(_row(f"{who} {mb} peak RSS ÷ file (the {base / MB:.0f} MB interpreter+"
                         f"imports included; above them {held:.2f}×)",
                         round(whole, 2), "×", RSS_TARGET if kind == "replay" else None,
                         ok=whole <= RSS_TARGET or kind == "before"))
    return rows


def run_floor() -> list[Row]:
    """Only the rows against the floor (``python bench/bench_replay.py --floor``)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-replay-") as tmp:
        return floor_rows(Path(tmp))


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
        rows += floor_rows(root)
    return rows


if __name__ == "__main__":
    for row in run_floor() if sys.argv[1:2] == ["--floor"] else run():
        mark = "ok" if row["ok"] else "MISSED"
        print(f"{row['name']:<60} {row['value']!s:>10} {row['unit']:<3} {mark}")
