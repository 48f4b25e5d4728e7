"""Benchmark of ``ctxlab watch``: what the proxy adds to a client's time to first byte.

The same streaming request (a ``/v1/messages`` call with ``"stream": true``) goes to the
scripted Messages server directly and through the proxy, interleaved, 200 times each, over
kept-alive connections. Time to first byte is from sending the request to the first byte
of the SSE body — what a user waits for before text appears. The proxy runs as it does in
``ctxlab watch``: measuring and recording every exchange in worker threads.

* **TTFB added, median** and **p95** — proxied minus direct; target < 5 ms.
  Baseline: the direct TTFB.

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

from tests.support.messages_server import MessagesServer
from tests.support.watching import RunningWatch

Row = dict[str, Any]
TARGET_MS = 5.0
ROUNDS = 200
BODY = json.dumps({"model": "claude-test", "max_tokens": 64, "stream": True,
                   "messages": [{"role": "user", "content": "Say hello. " * 50}]}).encode()
HEADERS = {"content-type": "application/json", "x-api-key": "bench",
           "anthropic-version": "2023-06-01"}


def ttfb_ms(conn: http.client.HTTPConnection) -> float:
    """One request's time to the first body byte; the rest of the body is drained."""
    start = time.perf_counter()
    conn.request("POST", "/v1/messages", body=BODY, headers=HEADERS)
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
        for _ in range(rounds):
            d.append(ttfb_ms(direct))
            p.append(ttfb_ms(proxied))
        direct.close()
        proxied.close()
        return d, p


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
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
