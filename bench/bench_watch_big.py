"""The watch bench's big-body rows: what a Claude Code–sized request costs going through.

An upstream, a bare relay and ``ctxlab watch`` each run in a process of their own
(``bench/bench_watch_host.py``), so neither the upstream's work nor the bench's client is
counted as the proxy's. The three ways — direct, through the relay (the floor), through the
watch — run interleaved, the order turning each round (A B C, B C A, C A B), and each row
reports the median of the per-round figures; ``best`` is the best round.

* **TTFB added, 1 / 5 / 20 MB body** — from the first byte of the request sent to the first
  byte of the answer, proxied minus direct, in the same round. The upstream reads the whole
  body before it answers, as the API does, so direct is the body's transfer; through the
  proxy it is the transfer, the proxy's hop and whatever the proxy does before forwarding.
  Floor: the relay minus direct — what copying the bytes through one more process costs on
  this machine, with no HTTP and no watching.
* **Event-loop lag while a 20 MB body passes** — the worst lateness of a ticker on the
  watch's loop (a task that sleeps a millisecond at a time) from the request sent until the
  watch has measured and recorded it, over half a second at least; baseline: the same
  ticker over the same window while the body goes straight to the upstream (the machine's
  own noise).
* **20 concurrent streams** — 20 clients at once, each sending a 1 MB body and reading a
  streamed answer of 200 events; throughput is the answers' bytes over the wall time until
  the last ends, proxied ÷ direct (floor: relay ÷ direct).
"""

from __future__ import annotations

import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from bench.rounds import rotations

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / "bench" / "bench_watch_host.py"
HEADERS = {"content-type": "application/json", "x-api-key": "bench",
           "anthropic-version": "2023-06-01"}
SIZES_MB = (1, 5, 20)
ROUNDS = {1: 20, 5: 12, 20: 8}
ADDED_TARGET_MS = 10.0
LAG_TARGET_MS = 20.0
STREAMS, STREAM_ROUNDS, STREAM_TARGET = 20, 5, 0.95
STREAM_HEADERS = {"x-bench-events": "200", "x-bench-event-bytes": "256",
                  "x-bench-pace-ms": "0"}


def claude_code_body(megabytes: float) -> bytes:
    """A Messages request the size Claude Code sends late in a long session: a system
    prompt, tools, and a history of turns with tool results (compact JSON, one line)."""
    turn = ("Read the file and fix the failing test. " * 8).strip()
    result = "\n".join(f"{n:5}  def step_{n}(self) -> None:  # 数据 {n}" for n in range(40))
    messages: list[dict[str, Any]] = []
    body: dict[str, Any] = {"model": "claude-test", "max_tokens": 64, "stream": True,
                            "system": [{"type": "text", "text": "You are Claude Code."}],
                            "tools": [{"name": "Read", "description": "Read a file.",
                                       "input_schema": {"type": "object"}}],
                            "messages": messages}
    target = int(megabytes * (1 << 20))
    size, n = 0, 0
    while size < target:
        n += 1
        pair = [{"role": "user", "content": [{"type": "text", "text": f"{turn} ({n})"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "Read",
                     "input": {"file_path": f"/src/mod_{n}.py"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": result}]},
                {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]
        messages.extend(pair)
        size += len(json.dumps(pair, ensure_ascii=False).encode())
    return json.dumps(body, ensure_ascii=False).encode()


@dataclass
class Hosts:
    """The upstream, the floor's relay and the watch; ``status()`` asks the watch for its
    loop's lag."""

    upstream: str
    relay: str
    watch: str
    _watch: subprocess.Popen[str]

    def url(self, way: str) -> str:
        return {"direct": self.upstream, "floor": self.relay, "proxied": self.watch}[way]

    def status(self) -> dict[str, Any]:
        assert self._watch.stdin is not None and self._watch.stdout is not None
        self._watch.stdin.write("status\n")
        self._watch.stdin.flush()
        value: dict[str, Any] = json.loads(self._watch.stdout.readline())
        return value

    def settle(self, finished: int, timeout: float = 120.0) -> float:
        """Wait until ``finished`` exchanges are measured and recorded; the worst loop lag
        since the last call, in ms."""
        deadline, worst = time.monotonic() + timeout, 0.0
        while True:
            status = self.status()
            worst = max(worst, status["lag_ms"])
            if status["finished"] >= finished or time.monotonic() > deadline:
                return worst
            time.sleep(0.005)


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HOST), *args], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _first_line(proc: subprocess.Popen[str]) -> str:
    stream: IO[str] | None = proc.stdout
    assert stream is not None
    return stream.readline().strip()


@contextmanager
def hosts() -> Iterator[Hosts]:
    with tempfile.TemporaryDirectory() as root:
        procs = [_start(["upstream"])]
        try:
            url = _first_line(procs[0])
            procs += [_start(["relay", url]), _start(["watch", url, root])]
            yield Hosts(url, _first_line(procs[1]), _first_line(procs[2]), procs[2])
        finally:
            for proc in reversed(procs):
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.terminate()
                proc.wait(20)


WAYS = ("direct", "floor", "proxied")


def _conn(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)


def ttfb(conn: http.client.HTTPConnection, body: bytes,
         headers: dict[str, str] | None = None) -> tuple[float, int]:
    """(ms from the request's first byte to the answer's first byte, the answer's bytes)."""
    start = time.perf_counter()
    conn.request("POST", "/v1/messages", body=body, headers={**HEADERS, **(headers or {})})
    response = conn.getresponse()
    first = response.read1(1)
    took = (time.perf_counter() - start) * 1000
    return took, len(first) + len(response.read())


def big_bodies(h: Hosts) -> list[dict[str, Any]]:
    """The TTFB-added rows per size, and the loop-lag row at the largest."""
    conns = {way: _conn(h.url(way)) for way in WAYS}
    finished = 0
    for _ in range(3):  # warm: connections, imports, the measuring process
        for conn in conns.values():
            ttfb(conn, claude_code_body(0.1))
        finished += 1
    h.settle(finished)
    rows = []
    for mb in SIZES_MB:
        body = claude_code_body(mb)
        took: dict[str, list[float]] = {way: [] for way in WAYS}
        lags: dict[str, list[float]] = {way: [] for way in WAYS}
        for _, order in rotations(WAYS, ROUNDS[mb]):
            window = 0.5  # seconds the ticker is read over, at least
            for way in order:
                h.settle(finished)  # the watch idle, the ticker's worst reset
                began = time.perf_counter()
                took[way].append(ttfb(conns[way], body)[0])
                finished += way == "proxied"
                lag = h.settle(finished)
                time.sleep(max(window - (time.perf_counter() - began), 0))
                lags[way].append(max(lag, h.settle(finished)))
        rows.append(_added_row(mb, took))
        if mb == max(SIZES_MB):
            lag, quiet = statistics.median(lags["proxied"]), statistics.median(lags["direct"])
            rows.append({"name": f"proxy: event-loop lag while a {mb} MB body passes",
                         "value": round(lag, 1), "unit": "ms", "target": LAG_TARGET_MS,
                         "baseline": round(quiet, 1),
                         "ratio": round(lag / quiet, 1) if quiet else None,
                         "best": round(min(lags["proxied"]), 1), "ok": lag < LAG_TARGET_MS})
    for conn in conns.values():
        conn.close()
    return rows


def _added_row(mb: int, took: dict[str, list[float]]) -> dict[str, Any]:
    """Proxied minus direct, per round; the floor: the bare relay minus direct."""
    added = [p - d for p, d in zip(took["proxied"], took["direct"], strict=True)]
    floor = [f - d for f, d in zip(took["floor"], took["direct"], strict=True)]
    ratios = [p / d for p, d in zip(took["proxied"], took["direct"], strict=True)]
    value, base = statistics.median(added), statistics.median(took["direct"])
    floor_added = statistics.median(floor)
    return {"name": f"proxy: TTFB added, {mb} MB body", "value": round(value, 2),
            "unit": "ms", "target": ADDED_TARGET_MS, "baseline": round(base, 2),
            "ratio": round(statistics.median(ratios), 2), "best": round(min(added), 2),
            "floor": round(floor_added, 2),
            "of_floor": round(value / floor_added, 1) if floor_added > 0 else None,
            "ok": value <= ADDED_TARGET_MS}


def _streams(url: str, body: bytes) -> float:
    """Bytes per second of answers while STREAMS clients each send one request at once."""
    got = [0] * STREAMS
    gate = threading.Barrier(STREAMS + 1)

    def one(i: int) -> None:
        conn = _conn(url)
        gate.wait()
        got[i] = ttfb(conn, body, STREAM_HEADERS)[1]
        conn.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(STREAMS)]
    for t in threads:
        t.start()
        time.sleep(0)
    gate.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return sum(got) / (time.perf_counter() - start)


def concurrent_streams(h: Hosts, finished: int) -> dict[str, Any]:
    body = claude_code_body(1)
    speeds: dict[str, list[float]] = {way: [] for way in WAYS}
    for _, order in rotations(WAYS, STREAM_ROUNDS):
        for way in order:
            speeds[way].append(_streams(h.url(way), body))
            if way == "proxied":
                finished += STREAMS
                h.settle(finished)  # the next run starts with the watch idle
    ratios = [p / d for p, d in zip(speeds["proxied"], speeds["direct"], strict=True)]
    floors = [f / d for f, d in zip(speeds["floor"], speeds["direct"], strict=True)]
    ratio, base = statistics.median(ratios), statistics.median(speeds["direct"]) / (1 << 20)
    return {"name": f"proxy: {STREAMS} concurrent streams, throughput",
            "value": round(statistics.median(speeds["proxied"]) / (1 << 20), 2),
            "unit": "MB/s", "target": f"≥ {STREAM_TARGET}× direct", "baseline": round(base, 2),
            "ratio": round(ratio, 2), "best": round(max(ratios), 2),
            "floor": round(statistics.median(floors), 2), "ok": ratio >= STREAM_TARGET}


def run() -> list[dict[str, Any]]:
    with hosts() as h:
        rows = big_bodies(h)
        finished = h.status()["finished"]
        rows.append(concurrent_streams(h, finished))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
