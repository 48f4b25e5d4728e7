"""What the real-client benches share: the sessions' wall time watched against direct, the
time to first byte the proxy adds with the client's own request bodies, and their rows.

A bench names its client's session recorder, the path its bodies go to, and how to start
the scripted server in front of which the watch stands; the measuring is the same for
Claude Code and Codex.
"""

from __future__ import annotations

import http.client
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from bench.bench_watch import TARGET_MS, _conn
from tests.support.watching import RunningWatch

Row = dict[str, Any]
RUNS = 3  # best of, for the wall times (the machine may be shared)
ROUNDS = 20  # passes over the session's bodies for the TTFB


def wall_times(record: Callable[..., Any], bodies: Callable[[Any], list[bytes]],
               version: list[str]) -> tuple[float, float, float, list[bytes]]:
    """(watched, direct, CLI start floor) in seconds, best of :data:`RUNS`; and the bodies
    the client sent. ``version`` is the CLI's ``--version`` command (five runs: the floor)."""
    watched, direct, sent = [], [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as base:
            done = record(Path(base))
            watched.append(done.seconds)
            sent = bodies(done)
        with tempfile.TemporaryDirectory() as base:
            direct.append(record(Path(base), watched=False).seconds)
    start = time.monotonic()
    for _ in range(5):
        subprocess.run(version, capture_output=True, check=True)
    return min(watched), min(direct), time.monotonic() - start, sent


def ttfb_ms(conn: http.client.HTTPConnection, path: str, body: bytes,
            headers: dict[str, str]) -> float:
    """One call's time to the first body byte; the rest of the body is drained."""
    start = time.perf_counter()
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    response.read1(1)
    first = time.perf_counter() - start
    response.read()
    return first * 1000


def ttfb_with(server: AbstractContextManager[Any], origin: Callable[[Any], str], path: str,
              bodies: list[bytes], headers: dict[str, str]) -> tuple[list[float], list[float]]:
    """Each body sent to the scripted server directly and through the proxy, interleaved,
    :data:`ROUNDS` times: (direct, proxied) times to first byte in ms."""
    with server as running, tempfile.TemporaryDirectory() as root, \
            RunningWatch(origin(running), Path(root)) as watch:
        direct, proxied = _conn(origin(running)), _conn(watch.url)
        for conn in (direct, proxied):
            ttfb_ms(conn, path, bodies[0], headers)
        d, p = [], []
        for _ in range(ROUNDS):
            for body in bodies:
                d.append(ttfb_ms(direct, path, body, headers))
                p.append(ttfb_ms(proxied, path, body, headers))
        direct.close()
        proxied.close()
    return d, p


def rows(sessions: str, ttfb: str, times: tuple[float, float, float, list[bytes]],
         d: list[float], p: list[float]) -> list[Row]:
    """The two rows: the sessions watched (against direct, with the CLI's start as floor)
    and the TTFB added (against the direct TTFB, target < 5 ms)."""
    watched, direct, floor, bodies = times
    base, value = statistics.median(d), statistics.median(p)
    size = statistics.median(len(b) for b in bodies)
    return [
        {"name": sessions, "value": round(watched, 2), "unit": "s", "target": None,
         "baseline": round(direct, 2), "ratio": round(watched / direct, 2), "ok": True,
         "floor": round(floor, 2)},
        {"name": f"{ttfb} (median {size / 1000:.0f} kB)", "value": round(value - base, 2),
         "unit": "ms", "target": TARGET_MS, "baseline": round(base, 2),
         "ratio": round(value / base, 2) if base else None, "ok": value - base < TARGET_MS},
    ]


def unavailable(client: str, exc: Exception) -> list[Row]:
    return [{"name": f"real {client} client unavailable: {exc}", "value": None, "unit": "",
             "target": None, "baseline": None, "ratio": None, "ok": False}]
