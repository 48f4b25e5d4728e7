"""Measuring request bodies in a child process, so a 20 MB body never stalls the proxy.

Parsing and dumping JSON are C calls that hold the interpreter lock for their whole length,
several per request, and on a 20 MB body each lasts many frames (docs/PERFORMANCE.md,
"Watch proxy"). In a worker *thread* that is time the proxy's event loop (and a UI on the
same loop) cannot run. One child process per watch does the measuring instead: it receives
the raw body through a pipe (written from a thread, out of band of the pickle around it),
keeps the watch's conversation state, and sends back small events. It is a plain
``python -m core.sources.watch.worker`` speaking length-prefixed pickles on stdin/stdout — not
``multiprocessing``, whose ``spawn`` re-imports the parent's ``__main__``
(``python -m tui`` would start a second ctxlab). It runs from the directory holding the
``core`` package, so a ``core/`` in the user's project cannot shadow it.

When the child cannot be had (it failed to start, it died), measuring falls back to a
thread in this process, with the same functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, cast

from core.events import Event, WatchRequest
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request

ROOT = Path(__file__).resolve().parents[3]  # the directory holding the ``core`` package
HEADER = 8  # bytes of each big-endian length in a message's header

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


# -- the pipe ------------------------------------------------------------------------------------
# A message is a header (the pickle's length, then the out-of-band buffer's), a pickle of
# protocol 5, and the request body as its out-of-band buffer: the 20 MB are written from the
# bytes the proxy holds and read into the child's own, never copied into a pickle.


def _pack(value: Any) -> list[bytes | memoryview]:
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    head = len(data).to_bytes(HEADER, "big") + len(raws).to_bytes(HEADER, "big") + \
        b"".join(len(r).to_bytes(HEADER, "big") for r in raws)
    return [head, data, *raws]


def _read_exactly(source: IO[bytes], size: int) -> bytes:
    data = source.read(size)
    if len(data) < size:
        raise EOFError("the other end closed the pipe")
    return data


def _unpack(source: IO[bytes]) -> Any:
    size = int.from_bytes(_read_exactly(source, HEADER), "big")
    count = int.from_bytes(_read_exactly(source, HEADER), "big")
    sizes = [int.from_bytes(_read_exactly(source, HEADER), "big") for _ in range(count)]
    data = _read_exactly(source, size)
    return pickle.loads(data, buffers=[_read_exactly(source, n) for n in sizes])


def _send(sink: IO[bytes], parts: list[bytes | memoryview]) -> None:
    for part in parts:
        sink.write(part)
    sink.flush()


def _call(key: str, x: Exchange) -> tuple[Any, ...]:
    """The call for ``x``, its body out of band."""
    shell = dataclasses.replace(x, body=b"")
    return ("measure", key, shell, pickle.PickleBuffer(x.body))


# -- the child ----------------------------------------------------------------------------------


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer ``("measure", key, exchange, body)`` calls until the parent closes the pipe."""
    while True:
        try:
            call = _unpack(source)
        except EOFError:
            return
        x = call[2]
        x.body = call[3]
        try:
            reply: tuple[str, Any] = ("ok", measure_raw(call[1], x))
        except Exception as exc:  # one bad body: say so, keep serving
            reply = ("error", f"{type(exc).__name__}: {exc}")
        _send(sink, _pack(reply))


# -- the parent's handle ------------------------------------------------------------------------


class MeasuringProcess:
    """One child per watch, one call at a time. The pipe is written and read in a thread
    with blocking calls, which let go of the interpreter's lock: pushing 20 MB through a
    64 kB pipe from the event loop took it hundreds of turns and a copy of the body."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        self._proc = await asyncio.to_thread(
            subprocess.Popen, [sys.executable, "-m", "core.sources.watch.worker"], cwd=ROOT,
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)

    async def measure(self, key: str, x: Exchange
                      ) -> tuple[WatchRequest, tuple[Event, ...], str | None]:
        """Raises :class:`MeasureError` for a bad body; ``OSError`` or ``EOFError`` when
        the child is gone."""
        async with self._lock:
            if self._proc is None:
                await self.start()
            proc = self._proc
            assert proc is not None and proc.stdin and proc.stdout
            call = asyncio.ensure_future(
                asyncio.to_thread(self._exchange, proc, _call(key, x)))
            try:
                status, value = await asyncio.shield(call)
            except asyncio.CancelledError:
                await self._abandon(proc, call)
                raise
        if status != "ok":
            raise MeasureError(value)
        return cast(tuple[WatchRequest, tuple[Event, ...], str | None], value)

    async def _abandon(self, proc: subprocess.Popen[bytes], call: asyncio.Future[Any]
                       ) -> None:
        """A call cancelled half-way: its thread goes on writing and reading the pipe, so
        the child is given up (the next call starts a fresh one) and killed, which ends the
        thread, before the lock is let go."""
        if self._proc is proc:
            self._proc = None
        proc.kill()
        await asyncio.wait([call])
        if not call.cancelled():
            call.exception()  # retrieved: a broken pipe, the kill's doing
        await asyncio.to_thread(proc.wait)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()

    @staticmethod
    def _exchange(proc: subprocess.Popen[bytes], call: tuple[Any, ...]) -> Any:
        assert proc.stdin and proc.stdout
        _send(proc.stdin, _pack(call))
        return _unpack(proc.stdout)

    async def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.close()
        try:
            await asyncio.to_thread(proc.wait, 5)
        except subprocess.TimeoutExpired:
            proc.kill()
            await asyncio.to_thread(proc.wait)
        if proc.stdout is not None:
            proc.stdout.close()


CHILD_NICENESS = 10  # the measuring yields the CPU to the proxy, which a client waits on


def _yield_cpu() -> None:
    """Lower this process's priority: on a busy machine, parsing a 20 MB body here took the
    core the proxy's event loop needed to pass the answer on. The measuring is after the
    fact; the client's bytes are not."""
    try:
        os.nice(CHILD_NICENESS)
    except (AttributeError, OSError):  # no nice() here (Windows), or not allowed
        pass


if __name__ == "__main__":
    _yield_cpu()
    serve(sys.stdin.buffer, sys.stdout.buffer)
