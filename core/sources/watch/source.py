"""The watch as an event source: ``await WatchSource(options).run(emit)`` until finished.

It starts the proxy and turns each exchange into events: ``watch_request`` (the measure,
the purpose guess and the difference with the previous request of the conversation), the
client's own compaction as ``stage`` events with ``by="client"``, then ``watch_response``
(status, stop reason, the real usage, timing, what went wrong). Every Messages, Responses
and Chat Completions call is appended to the recording. Parsing and measuring run in a
separate process (:mod:`core.sources.watch.worker`), one request at a time in arrival
order, so a body of tens of MB never stalls the proxy or a UI on its loop.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from core.events import Error, Event, RunStart, WatchRequest, WatchResponse, WatchStart
from core.sources import Capability, Source
from core.sources.watch import worker
from core.sources.watch.apis import MESSAGES, Upstreams, api_of
from core.sources.watch.exchange import Exchange, is_model_call, iso, read_exchange
from core.sources.watch.proxy import DEFAULT_UPSTREAM, WatchProxy
from core.sources.watch.recording import REENCODED_NOTE, Recording, record_pieces, utf8_body

KEEP_BODIES = 32  # request bodies kept for a viewer, oldest first out of the window
KEEP_BODY_BYTES = 64 << 20  # and their bytes, at most (a larger body is not kept)
# A body larger than this is forwarded but neither measured nor recorded: parsing it would
# cost the measuring process several times its size (the proxy takes bodies up to 1 GiB).
MEASURE_LIMIT = 256 << 20


class BodyWindow:
    """The last request bodies, for a viewer: at most :data:`KEEP_BODIES` of them and
    :data:`KEEP_BODY_BYTES` in all, so 32 bodies of 20 MB cannot pin 640 MB (the
    recording has every body)."""

    def __init__(self, count: int = KEEP_BODIES, budget: int = KEEP_BODY_BYTES) -> None:
        self.count, self.budget = count, budget
        self._bodies: OrderedDict[int, bytes] = OrderedDict()
        self.bytes = 0

    def add(self, request_id: int, body: bytes) -> None:
        if len(body) > self.budget:
            return
        self._bodies[request_id] = body
        self.bytes += len(body)
        while len(self._bodies) > self.count or self.bytes > self.budget:
            self.bytes -= len(self._bodies.popitem(last=False)[1])

    def get(self, request_id: int) -> bytes | None:
        return self._bodies.get(request_id)

    def __len__(self) -> int:
        return len(self._bodies)


@dataclass(frozen=True)
class Recordable:
    """How a measured request goes into the recording (``worker.recordable``; ``None``: not
    at all) and the conversation the watch placed it in, which its line carries."""

    how: str | None
    conversation: str | None = None


@dataclass
class WatchOptions:
    """``upstream``: where every request goes; ``None``: each to its API's host, Messages
    calls to ``messages_upstream`` (:class:`core.sources.watch.apis.Upstreams`)."""

    upstream: str | None = None
    messages_upstream: str = DEFAULT_UPSTREAM
    host: str = "127.0.0.1"
    port: int = 8787
    root: Path = field(default_factory=Path.cwd)  # the recording goes under root/.ctxlab/watch
    record: bool = True
    read_timeout: float = 600.0  # seconds without a byte from the upstream before a 504
    in_process: bool = False  # measure in a thread of this process instead of the worker


class ListenError(OSError):
    """The proxy could not listen where it was asked to."""

    kind = "listen"


class WatchSource(Source):
    """Proxy + analysis + recording, speaking events (a :class:`~core.sources.Source`).

    It serves until :meth:`finish` (the normal end: ``run_end`` says ok) or cancellation;
    it takes no prompt, and a live client cannot be paused."""

    capabilities = frozenset({Capability.FINISH, Capability.CANCEL})

    def __init__(self, options: WatchOptions) -> None:
        super().__init__()
        self.options = options
        self.name = "watch"
        self.recording = Recording(options.root) if options.record else None
        self.proxy = WatchProxy(Upstreams.of(options.upstream, options.messages_upstream),
                                host=options.host, port=options.port,
                                on_request=self._on_request, on_response=self._on_response,
                                read_timeout=options.read_timeout)
        self.ready = asyncio.Event()
        self._key = uuid.uuid4().hex  # this watch's conversations in the measuring process
        self._in_process = options.in_process
        self._child = worker.MeasuringProcess()
        self._recordable: dict[int, asyncio.Future[Recordable]] = {}
        self._order = asyncio.Lock()
        # Responses are read and appended one at a time, in the order their measurements
        # ended (the lock is first come, first served): two reads racing in threads wrote a
        # sequential client's lines out of order.
        self._appending = asyncio.Lock()
        self._kept = BodyWindow()

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        """A watch on a free loopback port that records nothing (no client is needed for it
        to start, serve and finish)."""
        return cls(WatchOptions(port=0, root=workdir, record=False, in_process=True))

    async def open(self) -> RunStart:
        """Check the recording's folder, start the measuring process, then listen."""
        if self.recording is not None:
            self.recording.check()  # a planted link: refused before anything is proxied
        if not self._in_process:
            try:  # start the child before the first body arrives
                await self._child.start()
            except OSError:
                self._in_process = True
        try:
            await self.proxy.start()
        except OSError as exc:
            where = f"{self.options.host}:{self.options.port}"
            raise ListenError(f"cannot listen on {where}: {exc.strerror or exc}") from exc
        return RunStart(provider="watch", workspace=str(self.options.root))

    async def play(self) -> None:
        """Say where it listens, then serve until :meth:`finish`."""
        where = str(self.recording.path) if self.recording else ""
        self.emit(WatchStart(listen=self.proxy.url, upstream=self.proxy.upstream,
                             recording=where))
        self.ready.set()
        await self.controls.until_finished()

    async def close(self) -> None:
        await self.proxy.stop()
        await self._child.close()
        worker.forget(self._key)

    def body(self, request_id: int) -> bytes | None:
        """The body of one of the last requests :class:`BodyWindow` keeps, as sent."""
        return self._kept.get(request_id)

    # -- measuring -------------------------------------------------------------------------

    async def _measure(self, x: Exchange
                       ) -> tuple[WatchRequest, tuple[Event, ...], str | None]:
        # only what the request was: the proxy keeps appending response chunks to ``x``
        x = Exchange(id=x.id, method=x.method, path=x.path, body=x.body, started=x.started,
                     session=x.session, agent=x.agent, window=x.window,
                     turn_metadata=x.turn_metadata)
        if not self._in_process:
            try:
                return await self._child.measure(self._key, x)
            except (OSError, EOFError, ValueError):
                self._in_process = True  # the child is gone: measure here from now on
                await self._child.close()
        return await asyncio.to_thread(worker.measure_raw, self._key, x)

    # -- observers (called by the proxy) ---------------------------------------------------

    def _recordable_future(self, x: Exchange) -> asyncio.Future[Recordable]:
        return self._recordable.setdefault(x.id, asyncio.get_running_loop().create_future())

    async def _on_request(self, x: Exchange) -> None:
        future = self._recordable_future(x)
        self._kept.add(x.id, x.body)
        recordable: str | None = None
        conversation: str | None = None
        try:
            if len(x.body) > MEASURE_LIMIT:
                self.emit(WatchRequest(id=x.id, method=x.method, path=x.path,
                                        time=iso(x.started), body_bytes=len(x.body)))
                raise ValueError(f"{len(x.body):,} bytes is over the {MEASURE_LIMIT:,} the "
                                 "watch reads; forwarded, not recorded")
            async with self._order:
                event, stages, recordable = await self._measure(x)
            conversation = event.conversation
            for each in (event, *stages):
                self.emit(each)
        except Exception as exc:  # a body this side cannot measure: say so, keep proxying
            self.emit(Error(message=f"watch: request {x.id} not analysed: {exc}",
                             kind="watch"))
        finally:
            if not future.done():
                future.set_result(Recordable(recordable, conversation))

    async def _on_response(self, x: Exchange) -> None:
        recordable = await self._recordable_future(x)
        self._recordable.pop(x.id, None)
        try:
            async with self._appending:
                event: Event = await asyncio.to_thread(self._finish, x, recordable)
        except Exception as exc:  # the client got its answer; only the watch lost it
            event = Error(message=f"watch: response {x.id} not recorded: {exc}", kind="watch")
        self.turns += 1  # requests watched: what run_end reports
        self.emit(event)

    def _finish(self, x: Exchange, measured: Recordable) -> WatchResponse:
        message, event, notes = read_exchange(x)
        if self.recording is not None and is_model_call(x.path) and measured.how:
            api = api_of(x.path)
            request = x.body
            if measured.how == worker.REENCODED:
                request, notes = utf8_body(x.body), [REENCODED_NOTE, *notes]
            self.recording.append(record_pieces(
                request, message, api=None if api == MESSAGES else api,
                request_id=x.id, conversation=measured.conversation,
                timestamp=iso(x.started), status=x.status,
                duration_ms=event.duration_ms, ttfb_ms=event.ttfb_ms, error=event.error,
                notes=notes or None))
        return event
