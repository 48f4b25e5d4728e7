"""Pause, step and pace: how a presenter controls a running agent loop.

The loop awaits :meth:`Gate.wait` before every main model call. The UI (or a test) only
calls the gate's methods — it never reaches into engine state — so control is the same in
the workbench, the headless runner and the tests.
"""

from __future__ import annotations

import asyncio


class Gate:
    """Running, paused, or paused with one step allowed; plus a delay between calls."""

    def __init__(self, *, paused: bool = False, delay: float = 0.0) -> None:
        self._open = asyncio.Event()
        self._steps = 0
        self.delay = delay
        if not paused:
            self._open.set()

    @property
    def paused(self) -> bool:
        return not self._open.is_set() or self._steps > 0

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._steps = 0
        self._open.set()

    def step(self) -> None:
        """Let exactly one more model call through, then stay paused."""
        self._steps += 1
        self._open.set()

    async def wait(self) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        await self._open.wait()
        if self._steps > 0:
            self._steps -= 1
            if self._steps == 0:
                self._open.clear()
