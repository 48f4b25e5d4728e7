"""Measuring request bodies in a child process, so a 20 MB body never stalls the proxy.

Parsing and dumping JSON are C calls that hold the interpreter lock for their whole length,
several per request, and on a 20 MB body each lasts many frames (docs/PERFORMANCE.md,
"Watch proxy"). In a worker *thread* that is time the proxy's event loop (and a UI on the
same loop) cannot run. One child process per watch does the measuring instead: it receives
the raw body through a pipe (a plain byte copy, written by the event loop without
blocking), keeps the watch's conversation state, and sends back small events. It is a plain
``python -m core.sources.watch.worker`` speaking length-prefixed pickles on stdin/stdout — not
``multiprocessing``, whose ``spawn`` re-imports the parent's ``__main__``
(``python -m tui`` would start a second ctxlab). It runs from the directory holding the
``core`` package, so a ``core/`` in the user's project cannot shadow it.

When the child cannot be had (it failed to start, it died), measuring falls back to a
thread in this process, with the same functions.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
from pathlib import Path
from typing import IO, Any

from core.events import Event, WatchRequest
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request

ROOT = Path(__file__).resolve().parents[3]  # the directory holding the ``core`` package
HEADER = 8  # bytes of the big-endian length before each pickle

# In the measuring process: each watch's conversations, by the watch's key.
_conversations: dict[str, Conversations] = {}


class MeasureError(Exception):
    """The child could not measure one body (the child itself is fine)."""


RAW, REENCODED = "raw", "reencoded"


def recordable(raw: bytes, body: Any) -> str | None:
    """How the body goes into a JSONL line: :data:`RAW` (spliced as it is), :data:`REENCODED`
    (see ``recording.utf8_body``) or ``None`` (not a JSON object: not recorded).

    Only strict UTF-8 is spliced: Python's JSON reader also takes a lone surrogate spelt as
    raw bytes (``\\xed\\xa0\\x80``), which would make the recording invalid UTF-8 and
    ``ctxlab replay`` refuse it whole. A literal newline in valid JSON is whitespace
    (strings cannot hold one), so it becomes a space."""
    import json

    if not isinstance(body, dict):
        return None
    return RAW if json.detect_encoding(raw) == "utf-8" and _strict_utf8(raw) else REENCODED


def _strict_utf8(raw: bytes, piece: int = 1 << 20) -> bool:
    """Is ``raw`` strict UTF-8? Checked a piece at a time, so a 20 MB body of CJK text is
    never held as an 80 MB string just to be checked."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    try:
        for start in range(0, len(view), piece):
            decoder.decode(view[start:start + piece])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def measure_raw(key: str, x: Exchange) -> tuple[WatchRequest, tuple[Event, ...], str | None]:
    """The request event, its client stages, and how it is recorded (in whichever process)."""
    conversations = _conversations.setdefault(key, Conversations())
    body, event, stages = measure_request(x, conversations)
    return event, stages, recordable(x.body, body)


def forget(key: str) -> None:
    """A watch ended: drop its conversations."""
    _conversations.pop(key, None)


# -- the child ----------------------------------------------------------------------------------


def _frame(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(HEADER, "big") + data


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer ``("measure", key, exchange)`` calls until the parent closes the pipe."""
    while True:
        head = source.read(HEADER)
        if len(head) < HEADER:
            return
        call = pickle.loads(source.read(int.from_bytes(head, "big")))
        try:
            reply: tuple[str, Any] = ("ok", measure_raw(call[1], call[2]))
        except Exception as exc:  # one bad body: say so, keep serving
            reply = ("error", f"{type(exc).__name__}: {exc}")
        sink.write(_frame(reply))
        sink.flush()


# -- the parent's handle ------------------------------------------------------------------------


class MeasuringProcess:
    """One child per watch, one call at a time."""

    def __init__(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "core.sources.watch.worker", cwd=ROOT, env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)

    async def measure(self, key: str, x: Exchange
                      ) -> tuple[WatchRequest, tuple[Event, ...], str | None]:
        """Raises :class:`MeasureError` for a bad body; ``OSError`` or
        ``asyncio.IncompleteReadError`` when the child is gone."""
        async with self._lock:
            if self._proc is None:
                await self.start()
            assert self._proc is not None and self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(_frame(("measure", key, x)))
            await self._proc.stdin.drain()
            size = int.from_bytes(await self._proc.stdout.readexactly(HEADER), "big")
            status, value = pickle.loads(await self._proc.stdout.readexactly(size))
        if status != "ok":
            raise MeasureError(value)
        return value

    async def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
