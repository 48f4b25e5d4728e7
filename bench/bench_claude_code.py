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
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_watch import HEADERS
from bench.real_clients import Row, rows, ttfb_with, unavailable, wall_times
from tests.support.claude_code import claude_binary
from tests.support.claude_code_session import record
from tests.support.messages_server import MessagesServer
from tests.support.messages_wire import Reply
from tests.support.npm_clients import Unavailable


def run() -> list[Row]:
    try:
        claude = claude_binary()
    except Unavailable as exc:
        return unavailable("Claude Code", exc)
    times = wall_times(record, lambda done: [r.raw for r in done.requests
                                             if r.path == "/v1/messages"],
                       [str(claude), "--version"])
    streamed = [json.dumps({**json.loads(b), "stream": True}).encode() for b in times[3]]
    server = MessagesServer()
    server.responder = lambda _request: Reply([{"type": "text", "text": "Hello! " * 20}])
    d, p = ttfb_with(server, lambda s: s.url, "/v1/messages", streamed, HEADERS)
    return rows("real-client sessions (5 print runs, 1 interactive), watched",
                "proxy: TTFB added, Claude Code bodies", times, d, p)


if __name__ == "__main__":
    for row in run():
        print(row)
