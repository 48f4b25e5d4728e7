"""Benchmark of the real Claude Code CLI through ``ctxlab watch``.

* **Real-client sessions, watched** — the wall time of the real-client tests' sessions
  (tests/support/claude_code_session.py: five print-mode runs of the pinned CLI with two
  compactions and a subagent, and one interactive session) through the watch. Baseline:
  the same runs straight to the scripted server, in the same bench run; floor: the CLI's own
  start-up, ``claude --version`` five times.
* **TTFB added with Claude Code's bodies** — the request bodies the CLI really sent in that
  session (its system prompt, 24 tool definitions, the history), each sent streaming to the
  scripted server directly and through the proxy, interleaved; time to the first SSE byte.
  Target: under 5 ms median. Baseline: the direct TTFB.

Run: ``python bench/bench_claude_code.py``; ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}``. Without npm the CLI cannot be had, and
the rows say so.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_watch import TARGET_MS, _conn, ttfb_ms
from tests.support.claude_code import Unavailable, claude_binary
from tests.support.claude_code_session import record
from tests.support.messages_server import MessagesServer
from tests.support.messages_wire import Reply
from tests.support.watching import RunningWatch

Row = dict[str, Any]
RUNS = 3  # best of, for the wall times (the machine may be shared)
ROUNDS = 20  # passes over the session's bodies for the TTFB


def wall_times() -> tuple[float, float, float, list[bytes]]:
    """(watched, direct, CLI start floor) in seconds, best of :data:`RUNS`; and the bodies."""
    watched, direct, bodies = [], [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as base:
            done = record(Path(base))
            watched.append(done.seconds)
            bodies = [r.raw for r in done.requests if r.path == "/v1/messages"]
        with tempfile.TemporaryDirectory() as base:
            direct.append(record(Path(base), watched=False).seconds)
    start = time.monotonic()
    for _ in range(5):
        subprocess.run([str(claude_binary()), "--version"], capture_output=True, check=True)
    return min(watched), min(direct), time.monotonic() - start, bodies


def ttfb_with(bodies: list[bytes]) -> tuple[list[float], list[float]]:
    streamed = [json.dumps({**json.loads(b), "stream": True}).encode() for b in bodies]
    with MessagesServer() as server, tempfile.TemporaryDirectory() as root, \
            RunningWatch(server.url, Path(root)) as watch:
        server.responder = lambda _request: Reply([{"type": "text", "text": "Hello! " * 20}])
        direct, proxied = _conn(server.url), _conn(watch.url)
        for conn in (direct, proxied):
            ttfb_ms(conn, streamed[0])
        d, p = [], []
        for _ in range(ROUNDS):
            for body in streamed:
                d.append(ttfb_ms(direct, body))
                p.append(ttfb_ms(proxied, body))
        direct.close()
        proxied.close()
    return d, p


def run() -> list[Row]:
    try:
        claude_binary()
    except Unavailable as exc:
        return [{"name": f"real Claude Code client unavailable: {exc}", "value": None,
                 "unit": "", "target": None, "baseline": None, "ratio": None, "ok": False}]
    watched, direct, floor, bodies = wall_times()
    d, p = ttfb_with(bodies)
    base, value = statistics.median(d), statistics.median(p)
    size = statistics.median(len(b) for b in bodies)
    return [
        {"name": "real-client sessions (5 print runs, 1 interactive), watched",
         "value": round(watched, 2), "unit": "s", "target": None, "baseline": round(direct, 2),
         "ratio": round(watched / direct, 2), "ok": True, "floor": round(floor, 2)},
        {"name": f"proxy: TTFB added, Claude Code bodies (median {size / 1000:.0f} kB)",
         "value": round(value - base, 2), "unit": "ms", "target": TARGET_MS,
         "baseline": round(base, 2), "ratio": round(value / base, 2) if base else None,
         "ok": value - base < TARGET_MS},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
