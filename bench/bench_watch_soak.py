"""Soak of ``ctxlab watch``: its memory stays within a stated budget whatever goes through.

The real command (``ctxlab watch --headless --json``, recording on) runs as a subprocess in
front of a loopback upstream that answers heavy (``tests/support/heavy_upstream.py``), and
gets, one after another:

* **200 conversations** of 1 MB bodies, each with a first message of its own (every tenth
  sent a second time, grown by a turn, so it is compared too);
* a **100 MB stream** of ``text_delta`` events;
* a **gzip bomb**: 1 MB on the wire, 1 GB once decompressed.

The resident size of the proxy and of its measuring process is sampled throughout; the rows
are each one's peak (the kernel's high-water mark, ``VmHWM``) against the budget, the idle
size as baseline, and how much each grew between the 50th and the 200th conversation (flat
is 0: what is held is bounded, not what has been seen). Before the bounds, the measuring
process kept every conversation (200 MB of bodies here), the proxy every chunk of the
stream and the whole decompressed bomb.

Budgets: the proxy < 256 MB, the measuring process < 128 MB, each growing < 16 MB from the
50th conversation to the 200th; every exchange answered, shown and recorded.

Run: ``python bench/bench_watch_soak.py`` (about half a minute); ``run()`` returns the rows
``{name, value, unit, target, baseline, ratio, ok}`` for an aggregating runner.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.heavy_upstream import HeavyUpstream, bomb

Row = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
CONVERSATIONS = 200
BODY_MB = 1
STREAM_MB = 100
BOMB_MB = 1024
# The budgets: the proxy reads at most 16 MiB of a response (parsing it takes a few copies),
# the measuring process holds at most 64 M chars of conversations (here 32 × 1 MB).
PROXY_BUDGET_MB = 256.0  # peak RSS of the proxy process
MEASURING_BUDGET_MB = 128.0  # peak RSS of its measuring process
GROWTH_BUDGET_MB = 16.0  # growth from the 50th to the 200th conversation, each process
HEADERS = {"content-type": "application/json", "x-api-key": "bench",
           "anthropic-version": "2023-06-01"}


def _status_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _post(conn: http.client.HTTPConnection, body: dict[str, Any]) -> int:
    """Send one request, read the whole answer (and drop it); the answer's length."""
    conn.request("POST", "/v1/messages", body=json.dumps(body).encode(), headers=HEADERS)
    response = conn.getresponse()
    size = 0
    while piece := response.read(1 << 20):
        size += len(piece)
    return size


def _conversation(n: int, turns: int = 1) -> dict[str, Any]:
    pad = "x" * (BODY_MB << 20)
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"conversation {n}: {pad}"}]
    for turn in range(1, turns):
        messages += [{"role": "assistant", "content": f"answer {turn}"},
                     {"role": "user", "content": f"question {turn}"}]
    return {"model": "claude-test", "max_tokens": 16, "messages": messages}


class Watch:
    """``ctxlab watch`` as a subprocess, its output drained, its memory sampled."""

    def __init__(self, upstream: str, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1"}
        env.pop("ANTHROPIC_BASE_URL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "watch", "--headless", "--json", "--port", "0",
             "--upstream", upstream], cwd=cwd, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.url = json.loads(self.proc.stdout.readline())["listen"]
        self.responses = 0
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 10
        while not _children(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.child = (_children(self.proc.pid) or [0])[0]

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.responses += '"watch_response"' in line

    def wait_responses(self, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.responses < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def rss(self) -> tuple[float, float]:
        """Each process's settled size: the least of a few samples over half a second (an
        exchange just answered may still be being recorded)."""
        samples = []
        for _ in range(5):
            time.sleep(0.1)
            samples.append((_status_mb(self.proc.pid, "VmRSS"), _status_mb(self.child, "VmRSS")))
        return min(a for a, _ in samples), min(b for _, b in samples)

    def peaks(self) -> tuple[float, float]:
        return _status_mb(self.proc.pid, "VmHWM"), _status_mb(self.child, "VmHWM")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def soak() -> dict[str, Any]:
    """Drive the three phases; RSS at the checkpoints, the peaks, and the wall time."""
    bomb(BOMB_MB)  # compressed before the clock starts (cached by the upstream)
    start = time.perf_counter()
    with HeavyUpstream() as upstream, tempfile.TemporaryDirectory() as cwd:
        watch = Watch(upstream.url, Path(cwd))
        try:
            parts = urlsplit(watch.url)
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
            sent = 0
            for _ in range(5):  # warm: imports, connections, the measuring process
                sent += bool(_post(conn, {"model": "m", "max_tokens": 1,
                                          "messages": [{"role": "user", "content": "hi"}]}))
            watch.wait_responses(sent)
            idle = watch.rss()
            checkpoints = {}
            for n in range(1, CONVERSATIONS + 1):
                _post(conn, _conversation(n))
                sent += 1
                if n % 10 == 0:
                    _post(conn, _conversation(n, turns=2))
                    sent += 1
                if n in (50, CONVERSATIONS):
                    watch.wait_responses(sent)
                    checkpoints[n] = watch.rss()
            streamed = _post(conn, {"model": f"stream-{STREAM_MB}", "max_tokens": 16,
                                    "stream": True, "messages": [
                                        {"role": "user", "content": "a long answer"}]})
            bombed = _post(conn, {"model": f"bomb-{BOMB_MB}", "max_tokens": 16,
                                  "messages": [{"role": "user", "content": "boom"}]})
            sent += 2
            watch.wait_responses(sent)
            conn.close()
            peaks = watch.peaks()
            recorded = sum(1 for p in Path(cwd, ".ctxlab", "watch").glob("*.jsonl")
                           for _ in p.open("rb"))
        finally:
            watch.stop()
    return {"idle": idle, "checkpoints": checkpoints, "peaks": peaks, "sent": sent,
            "seen": watch.responses, "recorded": recorded, "streamed_mb": streamed / 2**20,
            "bomb_mb": bombed / 2**20, "seconds": time.perf_counter() - start}


def run() -> list[Row]:
    result = soak()
    (idle_proxy, idle_child), peaks = result["idle"], result["peaks"]
    early, late = result["checkpoints"][50], result["checkpoints"][CONVERSATIONS]
    # every exchange answered, shown and recorded: a bound that drops work is no pass
    complete = result["seen"] == result["sent"] == result["recorded"]
    rows = []
    for who, peak, idle, budget in (("proxy", peaks[0], idle_proxy, PROXY_BUDGET_MB),
                                    ("measuring process", peaks[1], idle_child,
                                     MEASURING_BUDGET_MB)):
        rows.append({"name": f"watch soak: {who} peak RSS", "value": round(peak, 1),
                     "unit": "MB", "target": budget, "baseline": round(idle, 1),
                     "ratio": round(peak / idle, 2) if idle else None,
                     "ok": complete and 0 < peak < budget})
    for who, index in (("proxy", 0), ("measuring process", 1)):
        growth = late[index] - early[index]
        rows.append({"name": f"watch soak: {who} RSS growth, conversation 50 → "
                             f"{CONVERSATIONS}", "value": round(growth, 1), "unit": "MB",
                     "target": GROWTH_BUDGET_MB, "baseline": round(early[index], 1),
                     "ratio": round(late[index] / early[index], 2) if early[index] else None,
                     "ok": complete and growth < GROWTH_BUDGET_MB})
    rows.append({"name": f"watch soak: wall time ({result['sent']} requests, "
                         f"{result['streamed_mb']:.0f} MB stream, "
                         f"a {BOMB_MB // 1024} GB bomb of {result['bomb_mb']:.1f} MB)",
                 "value": round(result["seconds"], 1), "unit": "s", "target": 180.0,
                 "baseline": None, "ratio": None,
                 "ok": complete and result["seconds"] < 180})
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
