"""A request body passed upstream piece by piece as it arrives, and kept whole for the watch.

Reading a 20 MB body whole before forwarding it made the upstream wait for a second
transfer after the first: the client's time to first byte grew by the body's whole trip.
Here one task (the *pump*) reads the client's body as it comes, keeps each piece, and hands
it to the upstream call through a queue; the upstream call sends each piece as soon as it is
read. The pieces are joined once, when the observers ask, into the bytes they get.

The pump reads to the end whatever becomes of the upstream call (refused, answered early):
the exchange the watch reports always holds the whole body the client sent, as before. A
client that hangs up mid-body ends the pump with its error; the upstream call, still
waiting for pieces, is broken off with it, and no exchange is reported (there was no whole
request to report) — unless the upstream had answered already (a 413 or a 401 can come
before the body is read): the client got that answer, so the watch reports it, with the
part of the body that came (:meth:`RequestBody.partial`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from aiohttp import StreamReader
from aiohttp.web_exceptions import HTTPRequestEntityTooLarge

from core.sources.watch.sse import UnreadableBody, decoded

JOIN_IN_THREAD = 1 << 20  # bytes from which the pieces are joined off the event loop
READ_CHUNK = 1 << 20  # bytes the reader may buffer before it pauses the client
DECODED_LIMIT = 256 << 20  # bytes of a compressed request body decoded for the watch, at most


def decoded_body(raw: bytes, encoding: str) -> bytes:
    """A compressed request body as the client meant it, for measuring and recording (the
    upstream gets it as sent); the bytes as sent when it cannot be decoded or is larger
    than :data:`DECODED_LIMIT`, which then fail to parse and are reported not analysed."""
    try:
        body, cut = decoded(raw, encoding, DECODED_LIMIT)
    except UnreadableBody:
        return raw
    return raw if cut else body


class BodyBroken(ConnectionError):
    """The client's body ended before it was whole (it hung up, or sent less than it said)."""


class RequestBody:
    """The pump (started at once) and what it read: :meth:`upstream` for the forwarded
    call, :meth:`whole` for the observers; ``on_whole`` is called when the last piece is
    in."""

    def __init__(self, content: StreamReader, limit: int,
                 on_whole: Callable[[], None] | None = None) -> None:
        self._content, self._limit, self._on_whole = content, limit, on_whole
        self._pieces: list[bytes] = []
        self._joining: asyncio.Future[bytes] | None = None
        # the pieces for the upstream call, then None (the end) or what broke the body off
        self._queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
        self.received = 0
        content.set_read_chunk_size(READ_CHUNK)  # fewer, larger pieces than the default
        self._pump = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            while True:
                # readchunk hands over each piece as it was received; readany joins all
                # that wait into a new bytes, a copy of every byte passed on
                chunk, boundary = await self._content.readchunk()
                if not chunk:
                    # the end of a chunk of a chunked body: more may come. An empty body's
                    # reader is aiohttp's one shared EmptyStreamReader, which says "end of
                    # a chunk" for ever once any request has read it: at its end, stop.
                    if boundary and not self._content.at_eof():
                        continue
                    break
                self.received += len(chunk)
                if self.received > self._limit:
                    raise HTTPRequestEntityTooLarge(max_size=self._limit,
                                                    actual_size=self.received)
                self._pieces.append(chunk)
                self._queue.put_nowait(chunk)
        except BaseException as exc:
            self._queue.put_nowait(BodyBroken(f"the client's body broke off: {exc!r}"))
            raise
        self._queue.put_nowait(None)  # the upstream has it all: its end goes at once
        if self._on_whole is not None:
            self._on_whole()

    async def upstream(self) -> AsyncIterator[bytes]:
        """The pieces in order, as they arrive; raises :class:`BodyBroken` when the
        client's body broke off, so the upstream call is broken off too."""
        while True:
            piece = await self._queue.get()
            if isinstance(piece, BaseException):
                raise piece
            if piece is None:
                return
            yield piece

    async def whole(self) -> bytes:
        """The whole body (waits for the pump); raises what ended it early. The pieces are
        joined on the first call — the one copy, the observers' bytes."""
        await asyncio.shield(self._pump)
        if self._joining is None:
            self._joining = asyncio.ensure_future(self._join())
        return await asyncio.shield(self._joining)

    async def _join(self) -> bytes:
        """A large body is joined in a thread, where ``join`` lets go of the interpreter's
        lock for its memcpy (and the page faults of fresh memory)."""
        pieces, self._pieces = self._pieces, []
        if self.received >= JOIN_IN_THREAD:
            return await asyncio.to_thread(b"".join, pieces)
        return b"".join(pieces)

    def partial(self) -> bytes:
        """What came of a body the client broke off (all of it when it is whole)."""
        return b"".join(self._pieces)

    async def finished(self) -> bool:
        """Did the whole body arrive? Waits for the rest of it (an upstream may answer
        before it has read it all); ``False`` when the client broke off."""
        try:
            await asyncio.shield(self._pump)
        except asyncio.CancelledError:
            if self._pump.cancelled():
                return False
            raise
        except Exception:
            return False
        return True

    async def cancel(self) -> None:
        """Stop reading (the handler is being cancelled: the client is gone)."""
        self._pump.cancel()
        await asyncio.wait([self._pump])
        if not self._pump.cancelled():
            self._pump.exception()  # retrieved: it is the client's doing, not news
