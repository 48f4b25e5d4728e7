"""The measuring process's handle when a measuring call is cancelled half-way.

The call's pipe work runs in a thread, which cancelling the call does not stop: the next
call must not share the pipe with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
import time
from typing import Any

from core.sources.watch import worker
from core.sources.watch.exchange import Exchange

BODY = b'{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}'


def _exchange(n: int) -> Exchange:
    return Exchange(id=n, method="POST", path="/v1/messages", body=BODY, started=0.0)


def test_a_cancelled_measure_leaves_the_pipe_to_no_one(monkeypatch):
    """Before, the cancelled call let go of the lock while its thread still wrote to and
    read from the child: the next call used the same pipe at the same time."""
    real = worker.MeasuringProcess._exchange
    using: dict[int, int] = {}
    most = [0]
    lock = threading.Lock()

    def slow(proc: subprocess.Popen[bytes], call: tuple[Any, ...]) -> Any:
        with lock:
            using[proc.pid] = using.get(proc.pid, 0) + 1
            most[0] = max(most[0], using[proc.pid])
        try:
            time.sleep(0.3)  # the call is cancelled while its thread is in here
            return real(proc, call)
        finally:
            with lock:
                using[proc.pid] -= 1

    monkeypatch.setattr(worker.MeasuringProcess, "_exchange", staticmethod(slow))

    async def run() -> int:
        child = worker.MeasuringProcess()
        await child.start()
        try:
            first = asyncio.ensure_future(child.measure("k", _exchange(1)))
            await asyncio.sleep(0.05)
            first.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first
            event, _, _ = await child.measure("k", _exchange(2))
            return event.id
        finally:
            await child.close()
            worker.forget("k")

    assert asyncio.run(run()) == 2
    assert most[0] == 1
