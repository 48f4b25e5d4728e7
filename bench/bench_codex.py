"""Benchmark of the real Codex CLI through ``ctxlab watch``.

* **Real-client sessions, watched** — the wall time of the real-client tests' sessions
  (tests/support/codex_session.py: four ``codex exec`` runs and one app-server compaction,
  with local and remote compactions) through the watch. Baseline: the same runs straight to
  the scripted server, in the same bench run; floor: the CLI's own start-up,
  ``codex --version`` five times.
* **TTFB added on ``/v1/responses`` with Codex's bodies** — the request bodies the CLI
  really sent in that session (its developer instructions, its tools, the whole history),
  each sent streaming to the scripted server directly and through the proxy, interleaved;
  time to the first SSE byte. Target: under 5 ms median. Baseline: the direct TTFB.

Run: ``python bench/bench_codex.py``; ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}``. Without npm the CLI cannot be had, and
the rows say so.
"""

from __future__ import annotations

import http.client
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_watch import TARGET_MS, _conn
from tests.support.codex import codex_binary
from tests.support.codex_session import record
from tests.support.npm_clients import Unavailable
from tests.support.openai_server import RESPONSES, OpenAIServer
from tests.support.openai_wire import ResponsesReply, message_item
from tests.support.watching import RunningWatch

Row = dict[str, Any]
RUNS = 3  # best of, for the wall times (the machine may be shared)
ROUNDS = 20  # passes over the session's bodies for the TTFB
HEADERS = {"content-type": "application/json", "authorization": "Bearer bench",
           "accept": "text/event-stream"}


def wall_times() -> tuple[float, float, float, list[bytes]]:
    """(watched, direct, CLI start floor) in seconds, best of :data:`RUNS`; and the bodies."""
    watched, direct, bodies = [], [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as base:
            done = record(Path(base))
            watched.append(done.seconds)
            bodies = [r.raw for r in done.responses_calls]
        with tempfile.TemporaryDirectory() as base:
            direct.append(record(Path(base), watched=False).seconds)
    start = time.monotonic()
    for _ in range(5):
        subprocess.run([str(codex_binary()), "--version"], capture_output=True, check=True)
    return min(watched), min(direct), time.monotonic() - start, bodies


def ttfb_ms(conn: http.client.HTTPConnection, body: bytes) -> float:
    """One Responses call's time to the first body byte; the rest is drained."""
    start = time.perf_counter()
    conn.request("POST", RESPONSES, body=body, headers=HEADERS)
    response = conn.getresponse()
    response.read1(1)
    first = time.perf_counter() - start
    response.read()
    return first * 1000


def ttfb_with(bodies: list[bytes]) -> tuple[list[float], list[float]]:
    answer = ResponsesReply([message_item("Hello! " * 20)])
    with OpenAIServer(lambda _request: answer) as server, \
            tempfile.TemporaryDirectory() as root, \
            RunningWatch(server.origin, Path(root)) as watch:
        direct, proxied = _conn(server.origin), _conn(watch.url)
        for conn in (direct, proxied):
            ttfb_ms(conn, bodies[0])
        d, p = [], []
        for _ in range(ROUNDS):
            for body in bodies:
                d.append(ttfb_ms(direct, body))
                p.append(ttfb_ms(proxied, body))
        direct.close()
        proxied.close()
    return d, p


def run() -> list[Row]:
    try:
        codex_binary()
    except Unavailable as exc:
        return [{"name": f"real Codex client unavailable: {exc}", "value": None,
                 "unit": "", "target": None, "baseline": None, "ratio": None, "ok": False}]
    watched, direct, floor, bodies = wall_times()
    d, p = ttfb_with(bodies)
    base, value = statistics.median(d), statistics.median(p)
    size = statistics.median(len(b) for b in bodies)
    return [
        {"name": "real-client sessions (4 codex exec runs, 1 app-server compaction), watched",
         "value": round(watched, 2), "unit": "s", "target": None, "baseline": round(direct, 2),
         "ratio": round(watched / direct, 2), "ok": True, "floor": round(floor, 2)},
        {"name": f"proxy: TTFB added on /v1/responses, Codex bodies (median "
                 f"{size / 1000:.0f} kB)",
         "value": round(value - base, 2), "unit": "ms", "target": TARGET_MS,
         "baseline": round(base, 2), "ratio": round(value / base, 2) if base else None,
         "ok": value - base < TARGET_MS},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
