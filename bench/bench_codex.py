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

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.real_clients import Row, rows, ttfb_with, unavailable, wall_times
from tests.support.codex import codex_binary
from tests.support.codex_session import record
from tests.support.npm_clients import Unavailable
from tests.support.openai_server import RESPONSES, OpenAIServer
from tests.support.openai_wire import ResponsesReply, message_item

HEADERS = {"content-type": "application/json", "authorization": "Bearer bench",
           "accept": "text/event-stream"}


def run() -> list[Row]:
    try:
        codex = codex_binary()
    except Unavailable as exc:
        return unavailable("Codex", exc)
    times = wall_times(record, lambda done: [r.raw for r in done.responses_calls],
                       [str(codex), "--version"])
    answer = ResponsesReply([message_item("Hello! " * 20)])
    d, p = ttfb_with(OpenAIServer(lambda _request: answer), lambda s: s.origin, RESPONSES,
                     times[3], HEADERS)
    return rows("real-client sessions (4 codex exec runs, 1 app-server compaction), watched",
                "proxy: TTFB added on /v1/responses, Codex bodies", times, d, p)


if __name__ == "__main__":
    for row in run():
        print(row)
