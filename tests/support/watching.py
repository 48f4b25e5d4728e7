"""``ctxlab watch`` running in a background thread, for tests and benches that drive it
with the synchronous SDK (or their own event loop) over real HTTP."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.events import Event
from core.sources.watch.source import WatchOptions, WatchSource


class RunningWatch:
    """Start with ``start()``; ``url`` is the proxy; ``events`` fills as exchanges finish."""

    def __init__(self, upstream: str, root: Path, **options: Any) -> None:
        self.options = WatchOptions(upstream=upstream, port=0, root=root, **options)
        self.events: list[Event] = []
        self.source: WatchSource | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="ctxlab-watch")
        self._task: asyncio.Task[None] | None = None

    def start(self) -> RunningWatch:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._begin(), self._loop).result(10)
        return self

    async def _begin(self) -> None:
        self.source = WatchSource(self.options)
        self._task = asyncio.ensure_future(self.source.run(self.events.append))
        await asyncio.wait_for(self.source.ready.wait(), 10)

    def stop(self) -> None:
        async def end() -> None:
            assert self._task is not None
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

        asyncio.run_coroutine_threadsafe(end(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> RunningWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self.source is not None
        return self.source.proxy.url

    def of(self, kind: type[Event]) -> list[Any]:
        return [e for e in list(self.events) if isinstance(e, kind)]

    def wait_for(self, check: Callable[[RunningWatch], bool], timeout: float = 20.0) -> None:
        """Wait until ``check(self)`` holds (events arrive just after the client's answer)."""
        deadline = time.monotonic() + timeout
        while not check(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; events so far: {self.events}")
            time.sleep(0.01)
