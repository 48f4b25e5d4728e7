"""Benchmark of ``ctxlab watch`` on the OpenAI Responses API: the time to first byte added.

The request the Codex CLI really sent (tests/fixtures/watch/codex-0.171.0-request.json: its
developer prompt, nine tool definitions, ``stream: true``, 40 kB) goes to the scripted
OpenAI server's ``/v1/responses`` directly and through the proxy, interleaved, over
kept-alive connections; time to first byte is from sending it to the first byte of the SSE
body. The proxy runs as in ``ctxlab watch``: measuring (in its worker process) and
recording every exchange.

* **TTFB added on /v1/responses, median** — proxied minus direct; target < 5 ms.
  Baseline: the direct TTFB.

Run: ``python bench/bench_responses.py``; ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}``.
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

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_watch import TARGET_MS, _conn
from tests.support.openai_server import OpenAIServer
from tests.support.openai_wire import ResponsesReply, message_item
from tests.support.watching import RunningWatch

Row = dict[str, Any]
ROUNDS = 200
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "watch" / \
    "codex-0.171.0-request.json"
HEADERS = {"content-type": "application/json", "authorization": "Bearer bench",
           "accept": "text/event-stream"}


def codex_body() -> bytes:
    return json.dumps(json.loads(FIXTURE.read_text(encoding="utf-8"))["body"]).encode()


def ttfb_ms(conn: http.client.HTTPConnection, body: bytes) -> float:
    """One request's time to the first body byte; the rest of the body is drained."""
    start = time.perf_counter()
    conn.request("POST", "/v1/responses", body=body, headers=HEADERS)
    response = conn.getresponse()
    response.read1(1)
    first = time.perf_counter() - start
    response.read()
    return first * 1000


def measure(rounds: int = ROUNDS) -> tuple[list[float], list[float]]:
    body = codex_body()
    answer = ResponsesReply(output=[message_item("Hello! " * 20)])
    with OpenAIServer(lambda _request: answer) as server, \
            tempfile.TemporaryDirectory() as root, \
            RunningWatch(server.origin, Path(root)) as watch:
        direct, proxied = _conn(server.origin), _conn(watch.url)
        for conn in (direct, proxied):  # warm both paths (connections, imports, the worker)
            for _ in range(5):
                ttfb_ms(conn, body)
        d, p = [], []
        for _ in range(rounds):
            d.append(ttfb_ms(direct, body))
            p.append(ttfb_ms(proxied, body))
        direct.close()
        proxied.close()
    return d, p


def run() -> list[Row]:
    direct, proxied = measure()
    base, value = statistics.median(direct), statistics.median(proxied)
    added = value - base
    return [{"name": "proxy: TTFB added on /v1/responses, Codex's request, median",
             "value": round(added, 2), "unit": "ms", "target": TARGET_MS,
             "baseline": round(base, 2), "ratio": round(value / base, 2) if base else None,
             "ok": added < TARGET_MS}]


if __name__ == "__main__":
    for row in run():
        print(row)
