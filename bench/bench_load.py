"""Load: a long scripted run with megabyte results, headless, in a real process.

A scenario of ``TURNS`` requests is generated on the fly; every ``EVERY``-th request reads
the ``big_log`` sample workspace's 1.2 MB ``logs/ingest.log``, the others run a small
command. ``python -m tui run --headless --scenario FILE --workspace DIR --json`` plays it
in a child process (an empty workspace, so the generator fills it), and the bench reads:

* **wall time** of the whole run;
* **peak RSS** of that child (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``, read
  by a small launcher process, so neither this process's size nor other benches run in it
  count; see :data:`LAUNCHER`). The baseline is the same measure for a short run
  (``BASELINE_TURNS`` requests, two big reads) in the same session: a ratio near 1 would
  mean memory does not grow with the run's length;
* **largest main request** — the ``chars`` of every ``model_request`` with purpose ``main``
  (the history after ``prepare()``), which must never exceed the context limit;
* that the run ended with ``run_end`` ``ok: true``.

And one more row, the command a reader types first: **``ctxlab run --headless --scenario
refactor-auth``** in a child process (scripted provider, a temporary copy of the sample
workspace, every event printed), best of ``HEADLESS_REPEATS``; target < 5 s. Its baseline is
``python -m tui --help`` the same way: the interpreter's start and the command line's
imports, which every run pays before its first event.

Run: ``python bench/bench_load.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TURNS = 200
EVERY = 5
BASELINE_TURNS = 10
BIG_FILE = "logs/ingest.log"  # 1.2 MB in the big_log sample workspace
RSS_TARGET_MB = 400.0
WALL_TARGET_S = 120.0
CONTEXT_LIMIT = 50_000  # the default threshold the scenario runs under
HEADLESS_SCENARIO = "refactor-auth"
HEADLESS_TARGET_S = 5.0
HEADLESS_REPEATS = 3

Row = dict[str, Any]

# Runs the measured command and records its peak RSS. Linux carries a process's RSS high-water
# mark across exec, so a child spawned straight from a big process (a bench runner that has
# already built 10 MB histories, a long pytest session) would report at least its parent's
# size. This launcher is a fresh, small interpreter: the floor it passes on is a few MB.
LAUNCHER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as fh:\n"
    "    fh.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def scenario_text(turns: int = TURNS, every: int = EVERY) -> str:
    """A scenario in the documented YAML format (JSON is YAML), ``turns`` requests long."""
    session = []
    for n in range(1, turns + 1):
        if n % every == 0:
            request = f"Request {n}: read the ingest log again and report what changed."
            tools = [{"read_file": {"path": BIG_FILE}}]
            answer = f"Request {n}: the log is still {BIG_FILE}, all INFO lines."
        else:
            request = f"Request {n}: show the size of the ingest job."
            tools = [{"bash": {"command": f"wc -c ingest/job.py  # turn {n}"}}]
            answer = f"Request {n}: ingest/job.py is about 5 kB."
        session.append({"user": request, "replies": [
            {"say": f"Working on request {n}.", "tools": tools}, {"say": answer}]})
    return json.dumps({"name": f"load-{turns}", "title": f"{turns} requests, a 1.2 MB read "
                       f"every {every}", "workspace": "big_log",
                       "sessions": [{"turns": session}]}, indent=1)


@dataclass
class LoadResult:
    turns: int
    ok: bool
    exit_code: int
    wall_s: float
    peak_rss_mb: float
    main_requests: int
    max_main_chars: int
    over_limit: int
    stages: dict[str, int]
    stderr: str


def play(turns: int = TURNS, every: int = EVERY, root: Path | None = None) -> LoadResult:
    """Generate the scenario, run it headless in a child process, and measure it."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-load-", dir=root) as tmp:
        scenario = Path(tmp) / f"load-{turns}.yaml"
        scenario.write_text(scenario_text(turns, every), encoding="utf-8")
        workspace = Path(tmp) / "ws"  # absent: the big_log generator fills it
        out_path, err_path = Path(tmp) / "events.jsonl", Path(tmp) / "stderr.txt"
        env = _child_env()
        argv = [sys.executable, "-m", "tui", "run", "--headless", "--scenario", str(scenario),
                "--workspace", str(workspace), "--json"]
        rss_path = Path(tmp) / "maxrss.txt"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.perf_counter()
            code = subprocess.call([sys.executable, "-c", LAUNCHER, str(rss_path), *argv],
                                   cwd=ROOT, env=env, stdout=out, stderr=err)
            wall = time.perf_counter() - start
        maxrss = int(rss_path.read_text(encoding="utf-8"))
        events = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()
                  if line.strip()]
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
    mains = [e["chars"] for e in events
             if e.get("type") == "model_request" and e.get("purpose") == "main"]
    end = events[-1] if events else {}
    stages: dict[str, int] = {}
    for e in events:
        if e.get("type") == "stage":
            stages[e["stage"]] = stages.get(e["stage"], 0) + 1
    return LoadResult(
        turns=turns,
        ok=end.get("type") == "run_end" and end.get("ok") is True and end.get("turns") == turns,
        exit_code=code, wall_s=wall, peak_rss_mb=_rss_mb(maxrss),
        main_requests=len(mains), max_main_chars=max(mains, default=0),
        over_limit=sum(1 for c in mains if c > CONTEXT_LIMIT), stages=stages, stderr=stderr)


def _child_env() -> dict[str, str]:
    """This environment without API keys or ctxlab settings: the scripted provider runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CTXLAB_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


def best_wall(argv: list[str], repeats: int = HEADLESS_REPEATS) -> tuple[float, str]:
    """Best wall time (s) of ``repeats`` runs of ``python -m tui ARGV`` and the last one's
    output; a failing run raises, so the row never times an error message."""
    best = float("inf")
    out = ""
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tui", *argv], cwd=ROOT, env=_child_env(),
                              capture_output=True, text=True, timeout=120)
        best = min(best, time.perf_counter() - start)
        if done.returncode != 0:
            raise RuntimeError(f"python -m tui {' '.join(argv)} exited {done.returncode}: "
                               f"{done.stderr.strip().splitlines()[-1:]}")
        out = done.stdout
    return best, out


def headless_row(scenario: str = HEADLESS_SCENARIO) -> Row:
    """``ctxlab run --headless --scenario NAME --json``, best of 3, beside ``--help``."""
    baseline, _ = best_wall(["--help"])
    seconds, out = best_wall(["run", "--headless", "--scenario", scenario, "--json"])
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    end = events[-1] if events else {}
    finished = end.get("type") == "run_end" and end.get("ok") is True
    return {"name": f"ctxlab run --headless --scenario {scenario} --json (a real process, "
                    f"best of {HEADLESS_REPEATS})",
            "value": round(seconds, 2), "unit": "s", "target": HEADLESS_TARGET_S,
            "baseline": round(baseline, 2), "ratio": round(seconds / baseline, 1),
            "ok": finished and seconds < HEADLESS_TARGET_S}


def _rss_mb(maxrss: int) -> float:
    """``ru_maxrss`` is kilobytes on Linux and bytes on macOS."""
    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024


def rows_for(result: LoadResult, baseline: LoadResult) -> list[Row]:
    name = f"{result.turns}-turn run, 1.2 MB read every {EVERY}"
    ratio = result.peak_rss_mb / baseline.peak_rss_mb if baseline.peak_rss_mb else None
    return [
        {"name": f"{name}: wall time", "value": round(result.wall_s, 2), "unit": "s",
         "target": WALL_TARGET_S, "baseline": round(baseline.wall_s, 2),
         "ratio": round(result.wall_s / baseline.wall_s, 1) if baseline.wall_s else None,
         "ok": result.ok and result.wall_s < WALL_TARGET_S},
        {"name": f"{name}: peak RSS (baseline: {baseline.turns} turns)",
         "value": round(result.peak_rss_mb, 1), "unit": "MB", "target": RSS_TARGET_MB,
         "baseline": round(baseline.peak_rss_mb, 1),
         "ratio": None if ratio is None else round(ratio, 2),
         "ok": result.ok and result.peak_rss_mb < RSS_TARGET_MB},
        {"name": f"{name}: largest main request ({result.main_requests} calls)",
         "value": result.max_main_chars, "unit": "chars", "target": f"≤ {CONTEXT_LIMIT:,} chars",
         "baseline": None, "ratio": None,
         "ok": result.ok and result.over_limit == 0},
    ]


def run() -> list[Row]:
    baseline = play(BASELINE_TURNS)
    result = play(TURNS)
    return [*rows_for(result, baseline), headless_row()]


def main() -> int:
    baseline = play(BASELINE_TURNS)
    result = play(TURNS)
    for label, r in (("baseline", baseline), ("load", result)):
        print(f"{label}: {r.turns} turns, ok={r.ok} (exit {r.exit_code}), {r.wall_s:.1f} s, "
              f"peak RSS {r.peak_rss_mb:.0f} MB, {r.main_requests} main calls, largest "
              f"{r.max_main_chars:,} chars, stages {r.stages}")
        if r.stderr:
            print(r.stderr, file=sys.stderr)
    rows = [*rows_for(result, baseline), headless_row()]
    for row in rows:
        target = row["target"] if isinstance(row["target"], str) else f"< {row['target']:g}"
        print(f"{row['name']}: {row['value']} {row['unit']} (target {target}) "
              f"{'ok' if row['ok'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
