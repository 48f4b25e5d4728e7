"""Benchmark of ``ctxlab watch``: what the proxy adds to a client's time to first byte.

The same streaming request (a ``/v1/messages`` call with ``"stream": true``) goes to the
scripted Messages server directly and through the proxy, interleaved, 200 times each, over
kept-alive connections. Time to first byte is from sending the request to the first byte
of the SSE body — what a user waits for before text appears. The proxy runs as it does in
``ctxlab watch``: measuring and recording every exchange in worker threads.

* **TTFB added, median** and **p95** — proxied minus direct; target < 5 ms.
  Baseline: the direct TTFB.
* **TTFB beside a 20 MB body** — the worst proxied TTFB of small requests sent while a
  20 MB request is forwarded and measured (parsing and measuring run in a worker thread,
  but hold the interpreter's lock while in C code such as ``json.loads``); target < 50 ms,
  the workbench's stall target. Baseline: the proxied median without it.

The big-body rows — time to first byte added with a 1, 5 and 20 MB request body, the
event loop's lag while the 20 MB body passes, and 20 concurrent streams' throughput — run
the upstream, a bare relay (the floor) and the watch each in a process of their own,
interleaved: see ``bench/bench_watch_big.py``.

Run: ``python bench/bench_watch.py``; ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}`` for an aggregating runner.
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_watch_big
from bench.rounds import rotations
from tests.support.messages_server import MessagesServer
from tests.support.watching import RunningWatch

Row = dict[str, Any]
TARGET_MS = 5.0
STALL_TARGET_MS = 50.0
ROUNDS = 200
BODY = json.dumps({"model": "claude-test", "max_tokens": 64, "stream": True,
                   "messages": [{"role": "user", "content": "Say hello. " * 50}]}).encode()
HEADERS = {"content-type": "application/json", "x-api-key": "bench",
           "anthropic-version": "2023-06-01"}


def ttfb_ms(conn: http.client.HTTPConnection, body: bytes = BODY) -> float:
    """One request's time to the first body byte; the rest of the body is drained."""
    start = time.perf_counter()
    conn.request("POST", "/v1/messages", body=body, headers=HEADERS)
    response = conn.getresponse()
    response.read1(1)
    first = time.perf_counter() - start
    response.read()
    return first * 1000


def _conn(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)


def measure(rounds: int = ROUNDS) -> tuple[list[float], list[float]]:
    with MessagesServer() as server, tempfile.TemporaryDirectory() as root, \
            RunningWatch(server.url, Path(root)) as watch:
        direct, proxied = _conn(server.url), _conn(watch.url)
        for _ in range(2 * rounds + 10):
            server.reply_text("Hello! " * 20)
        for conn in (direct, proxied):  # warm both paths (connections, imports, threads)
            for _ in range(5):
                ttfb_ms(conn)
        d, p = [], []
        for _, order in rotations(("direct", "proxied"), rounds):
            for way in order:
                (d if way == "direct" else p).append(ttfb_ms(direct if way == "direct"
                                                             else proxied))
        direct.close()
        proxied.close()
        return d, p


def beside_a_big_body(rounds: int = 40) -> float:
    """The worst small-request TTFB through the proxy while a 20 MB body goes through it."""
    import threading

    big = json.dumps({"model": "claude-test", "max_tokens": 8,
                      "messages": [{"role": "user", "content": "word " * 4_000_000}]}).encode()
    with MessagesServer() as server, tempfile.TemporaryDirectory() as root, \
            RunningWatch(server.url, Path(root)) as watch:
        for _ in range(rounds + 10):
            server.reply_text("Hello!")
        small = _conn(watch.url)
        for _ in range(5):
            ttfb_ms(small)

        def send_big() -> None:
            conn = _conn(watch.url)
            conn.request("POST", "/v1/messages", body=big, headers=HEADERS)
            conn.getresponse().read()
            conn.close()

        sender = threading.Thread(target=send_big)
        sender.start()
        worst = max(ttfb_ms(small) for _ in range(rounds))
        sender.join()
        small.close()
        return worst


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def run() -> list[Row]:
    direct, proxied = measure()
    rows = []
    stats = (("proxy: TTFB added, median", statistics.median),
             ("proxy: TTFB added, p95", _p95))
    for name, stat in stats:
        base, value = stat(direct), stat(proxied)
        added = value - base
        rows.append({"name": name, "value": round(added, 2), "unit": "ms",
                     "target": TARGET_MS, "baseline": round(base, 2),
                     "ratio": round(value / base, 2) if base else None,
                     "ok": added < TARGET_MS})
    worst = beside_a_big_body()
    base = statistics.median(proxied)
    rows.append({"name": "proxy: worst TTFB beside a 20 MB body", "value": round(worst, 1),
                 "unit": "ms", "target": STALL_TARGET_MS, "baseline": round(base, 2),
                 "ratio": round(worst / base, 1) if base else None,
                 "ok": worst < STALL_TARGET_MS})
    return rows + bench_watch_big.run()


if __name__ == "__main__":
    for row in run():
        print(row)
