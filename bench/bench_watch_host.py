"""The processes behind the watch bench's big-body rows: an upstream and a watch, each alone.

Run in one process, a scripted upstream that parses what it gets (or the bench's own HTTP
client) would take the interpreter's lock from the proxy, and its cost would be counted as
the proxy's. So each side runs in its own process, as it does for a user:

* ``python bench/bench_watch_host.py upstream`` — an aiohttp server that reads the request
  body to its end (dropping it, as an API that answers after reading it does) and answers an
  SSE stream of ``x-bench-events`` events of ``x-bench-event-bytes`` bytes, one every
  ``x-bench-pace-ms`` milliseconds (0: as fast as the socket takes them). It prints its URL.
* ``python bench/bench_watch_host.py relay UPSTREAM`` — the floor: a bare TCP relay that
  copies bytes both ways and does nothing else (no HTTP, no watching); what any proxy in
  Python on this machine costs at the least. It prints its URL.
* ``python bench/bench_watch_host.py watch UPSTREAM DIR`` — ``ctxlab watch`` as the command
  runs it (the measuring process, recording under ``DIR``), with a *ticker* on its event
  loop: a task that sleeps a millisecond at a time and notes how late it wakes. It prints
  its URL, then answers each ``status`` line on stdin with one JSON line: the loop's worst
  lag since the previous ``status`` and the exchanges finished so far.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TICK = 0.001  # seconds the ticker sleeps between its looks at the clock


async def _upstream() -> None:
    from aiohttp import web

    async def answer(request: web.Request) -> web.StreamResponse:
        async for _ in request.content.iter_any():  # the whole body, as an API reads it
            pass
        events = int(request.headers.get("x-bench-events", "8"))
        size = int(request.headers.get("x-bench-event-bytes", "64"))
        pace = float(request.headers.get("x-bench-pace-ms", "0")) / 1000
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        event = b"event: ping\ndata: " + b"x" * max(size - 20, 1) + b"\n\n"
        for _ in range(events):
            await response.write(event)
            if pace:
                await asyncio.sleep(pace)
        await response.write_eof()
        return response

    app = web.Application(client_max_size=1 << 30)
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()


class _Half(asyncio.Protocol):
    """One side of the relay: what it receives goes to its peer's transport at once, and it
    stops reading while the peer cannot keep up."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Half | None = None
        self.early: list[bytes] = []  # what arrived before the peer connected
        self.connecting: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.peer is None or self.peer.transport is None:
            self.early.append(data)
        else:
            self.peer.transport.write(data)

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


async def _relay(upstream: str) -> None:
    host, port = upstream.removeprefix("http://").rsplit(":", 1)
    loop = asyncio.get_running_loop()

    def client_side() -> _Half:
        near = _Half()

        async def connect() -> None:
            _, far = await loop.create_connection(_Half, host, int(port))
            near.peer, far.peer = far, near
            assert far.transport is not None
            for data in near.early:
                far.transport.write(data)
            near.early.clear()

        near.connecting = loop.create_task(connect())
        return near

    server = await loop.create_server(client_side, "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()


class Ticker:
    """How late the loop runs a task that asked to wake a millisecond later."""

    def __init__(self) -> None:
        self.worst = 0.0

    async def run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(TICK)
            self.worst = max(self.worst, time.perf_counter() - before - TICK)

    def take(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst * 1000


async def _watch(upstream: str, root: Path) -> None:
    from core.events import Event, WatchResponse
    from core.sources.watch.source import WatchOptions, WatchSource

    finished = 0

    def emit(event: Event) -> None:
        nonlocal finished
        finished += isinstance(event, WatchResponse)

    source = WatchSource(WatchOptions(upstream=upstream, port=0, root=root))
    running = asyncio.ensure_future(source.run(emit))
    await asyncio.wait_for(source.ready.wait(), 30)
    ticker = Ticker()
    ticking = asyncio.ensure_future(ticker.run())
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def commands() -> None:  # a thread: stdin is read without the loop
        for line in sys.stdin:
            if line.strip() == "status":
                reply = {"lag_ms": ticker.take(), "finished": finished}
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
        loop.call_soon_threadsafe(done.set)

    threading.Thread(target=commands, daemon=True).start()
    print(source.proxy.url, flush=True)
    await done.wait()
    ticking.cancel()
    running.cancel()
    try:
        await running
    except asyncio.CancelledError:
        pass


def main(argv: list[str]) -> None:
    if argv[:1] == ["upstream"]:
        asyncio.run(_upstream())
    elif argv[:1] == ["relay"] and len(argv) == 2:
        asyncio.run(_relay(argv[1]))
    elif argv[:1] == ["watch"] and len(argv) == 3:
        asyncio.run(_watch(argv[1], Path(argv[2])))
    else:
        raise SystemExit("usage: bench_watch_host.py upstream | relay UPSTREAM | "
                         "watch UPSTREAM DIR")


if __name__ == "__main__":
    main(sys.argv[1:])
