"""The reverse proxy: every request forwarded unchanged, every answer streamed straight back.

aiohttp on both sides. The request body goes upstream piece by piece as it arrives
(:mod:`core.sources.watch.body`: read whole first, a 20 MB body made the upstream wait for a
second transfer), and the response is copied to the client chunk by chunk as the upstream
sends it, so an SSE stream reaches the client event by event, never buffered. Headers go
both ways untouched except the hop-by-hop ones HTTP itself owns; they are never logged nor
handed to the observer — bar the client's session and agent id headers and Codex's window
id and turn metadata, which are no secrets — so credentials stay on the wire. Compressed
bodies are passed on compressed, both ways (a compressed request body is decoded for the
observer only). Each request goes to its API's upstream (:mod:`core.sources.watch.apis`).

What the proxy tells its observer is an :class:`Exchange`: the request body, the response
bytes, status and timing — after the fact, so watching costs the client nothing, and in
the order the requests' bodies became whole (as when each body was read before it was
passed on), whatever order their answers come in. Its clock starts when the request body
is whole, as it did when the body was read first. When the
upstream cannot be reached the client gets an ``api_error`` body in its API's shape with
502 (refused) or 504 (timed out), the statuses a gateway answers with; a client that hangs
up mid-stream closes the upstream call, and one that hangs up mid-body is not reported (no
whole request was made) unless its answer was out already (an upstream may refuse a body
before reading it): that exchange is reported with the part of the body that came and an
error saying so, as is one whose client, answered, stops sending the rest of its body
(:data:`REST_OF_BODY`). A WebSocket upgrade is answered 426 at once (its body in the API's
shape, as the gateway errors are): the proxy speaks HTTP only, and Codex, refused so, falls
back to HTTP without retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web
from yarl import URL

from core.sources.watch.apis import ANTHROPIC_UPSTREAM, Upstreams, error_body, speaks_openai
from core.sources.watch.body import RequestBody, decoded_body
from core.sources.watch.exchange import CLIENT_LEFT, Exchange
from core.sources.watch.identity import (
    AGENT_HEADER,
    CODEX_METADATA_HEADER,
    CODEX_WINDOW_HEADER,
    SESSION_HEADERS,
    header_id,
)

DEFAULT_UPSTREAM = ANTHROPIC_UPSTREAM
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
    "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
})
STOP_GRACE = 5.0  # seconds the observers get to report the last exchanges on stop
MAX_BODY = 1 << 30  # a request body of up to 1 GiB is forwarded
OBSERVE_AFTER = 0.1  # seconds a whole request waits for its answer's first byte to be told
REST_OF_BODY = 30.0  # seconds the rest of a body is awaited once its answer is out


Observer = Callable[[Exchange], Awaitable[None]]
MAX_METADATA = 8192  # characters of Codex's turn metadata header kept


def _metadata(value: str | None) -> str | None:
    return value if value and len(value) <= MAX_METADATA else None


UPGRADE_REFUSED = ("ctxlab watch proxies HTTP only: WebSocket upgrades are refused so the "
                   "client falls back to HTTP at once")


def is_websocket(request: web.Request) -> bool:
    return request.headers.get("upgrade", "").lower() == "websocket"


def _session(headers: Mapping[str, str]) -> str | None:
    """The client's session id: the first of its session headers it sent."""
    return next((found for name in SESSION_HEADERS
                 if (found := header_id(headers.get(name))) is not None), None)


@dataclass
class Clock:
    """When the exchange started (its body whole), on the clock its timings are read from,
    whether the client has the answer's first byte yet, and its place in the line of
    exchanges told to the observer (taken when its body is whole): ``told`` is set once
    this one was told, and ``after`` is the previous one's, which this one waits for."""

    start: float
    after: asyncio.Event | None = None
    relayed: bool = False  # the upstream's answer went to the client (its status line out)
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    told: asyncio.Event = field(default_factory=asyncio.Event)


class WatchProxy:
    """A running proxy: ``await start()``, ``url``, ``await stop()``."""

    def __init__(self, upstream: str | Upstreams | None = DEFAULT_UPSTREAM, *,
                 host: str = "127.0.0.1",
                 port: int = 8787, on_request: Observer | None = None,
                 on_response: Observer | None = None, connect_timeout: float = 30.0,
                 read_timeout: float = 600.0) -> None:
        self.upstreams = upstream if isinstance(upstream, Upstreams) else \
            Upstreams.of(upstream)
        self.host, self.port = host, port
        self.on_request, self.on_response = on_request, on_response
        self.timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout,
                                             sock_read=read_timeout)
        self._ids = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_told: asyncio.Event | None = None  # the newest exchange's ``Clock.told``

    @property
    def upstream(self) -> str:
        """Where requests go, as ``watch_start`` says it."""
        return self.upstreams.describe()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 literal
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(
            auto_decompress=False, timeout=self.timeout,
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"))
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # auto_decompress off: a compressed request body goes upstream as the client sent it
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None,
                                     auto_decompress=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        if self.port == 0:  # an ephemeral port: read back which one
            self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tasks:  # let the observers finish what arrived, but not forever
            _, late = await asyncio.wait(list(self._tasks), timeout=STOP_GRACE)
            for task in late:
                task.cancel()
            for task in late:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await task
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- one request -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        openai = speaks_openai(request.path, request.headers)
        if is_websocket(request):  # refused before it is counted: no exchange happened
            return web.Response(status=426, content_type="application/json", body=error_body(
                openai, UPGRADE_REFUSED, "invalid_request_error", "upgrade_required"))
        length = request.content_length
        if length is not None and length > MAX_BODY:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=length)
        self._ids += 1
        given = request.headers
        x = Exchange(id=self._ids, method=request.method, path=request.path, body=b"",
                     started=time.time(), session=_session(given),
                     agent=header_id(given.get(AGENT_HEADER)),
                     window=header_id(given.get(CODEX_WINDOW_HEADER)),
                     turn_metadata=_metadata(given.get(CODEX_METADATA_HEADER)))
        clock = Clock(time.perf_counter())
        body: RequestBody | None = None
        try:  # from the pump's start on: whatever fails, the pump is stopped
            body = made = RequestBody(request.content, MAX_BODY, on_whole=lambda: self._arrived(
                x, made, clock, given.get("content-encoding")))
            headers = [(k, v) for k, v in given.items() if k.lower() not in HOP_BY_HOP]
            target = self.upstreams.target(request.raw_path, given)
            if length:  # its length said: each piece goes on as it arrives
                headers.append(("Content-Length", str(length)))
                data: AsyncIterator[bytes] | bytes | None = body.upstream()
            else:  # chunked or empty: read whole first, sent with its length as before
                data = await body.whole() or None
            return await self._forward(request, x, target, headers, clock, openai, data)
        except BaseException:
            if body is not None:
                await body.cancel()  # the client is gone (a whole body stays whole)
            raise
        finally:
            clock.answered.set()
            if body is not None:
                await self._settle(x, body, clock, length)

    async def _settle(self, x: Exchange, body: RequestBody, clock: Clock,
                      length: int | None) -> None:
        """The answer is out (or failed): report the exchange once its body is whole, or
        with what came of it when the client had its answer first (with no whole body and
        no answer, there was no request to report)."""
        try:
            rest, gone = await self._rest_of(body), False
        except asyncio.CancelledError:  # the client hung up while its body was awaited
            await body.cancel()
            rest, gone = f"{CLIENT_LEFT} mid-body", True
        if rest is not None:
            if clock.relayed:  # answered, then the body broke off
                self._report_partial(x, body, clock, rest, length)
        else:
            x.duration_ms = (time.perf_counter() - clock.start) * 1000
            if self.on_request is None:  # else _tell gives the exchange its body
                x.body = await body.whole()
            if self.on_response is not None:
                self._spawn(self.on_response(x))
        if gone:  # reported: now the cancellation goes on
            raise asyncio.CancelledError

    @staticmethod
    async def _rest_of(body: RequestBody) -> str | None:
        """Wait for the rest of the body (the upstream may have answered before it read it
        all), but not for ever: ``None`` once it is whole, else what became of it."""
        try:
            whole = await asyncio.wait_for(body.finished(), REST_OF_BODY)
        except TimeoutError:
            await body.cancel()
            return "the client stopped sending it"
        return None if whole else f"{CLIENT_LEFT} mid-body"

    def _report_partial(self, x: Exchange, body: RequestBody, clock: Clock, why: str,
                        length: int | None) -> None:
        """The client got an answer to a body it did not finish: report the exchange (the
        answer is news) with what came of the body, and say it is partial."""
        x.duration_ms = (time.perf_counter() - clock.start) * 1000
        said = f" of {length:,}" if length is not None else ""
        note = f"request body partial ({body.received:,}{said} bytes): {why} after the answer"
        x.error = f"{x.error}; {note}" if x.error else note
        if self.on_request is not None:
            self._queue_up(clock)
            self._spawn(self._tell(x, body, clock, None, whole=False))
        else:
            x.body = body.partial()
        if self.on_response is not None:
            self._spawn(self.on_response(x))

    def _arrived(self, x: Exchange, body: RequestBody, clock: Clock,
                 encoding: str | None) -> None:
        """The body is whole: the exchange starts now, and its observer will hear of it."""
        x.started, clock.start = time.time(), time.perf_counter()
        if self.on_request is not None:
            self._queue_up(clock)
            self._spawn(self._tell(x, body, clock, encoding))

    def _queue_up(self, clock: Clock) -> None:
        """Its turn to be told comes after the exchange queued up before it."""
        clock.after, self._last_told = self._last_told, clock.told

    async def _tell(self, x: Exchange, body: RequestBody, clock: Clock,
                    encoding: str | None, *, whole: bool = True) -> None:
        """Hand the whole body to the observer once the client has the answer's first byte
        (or :data:`OBSERVE_AFTER` has passed): its join and measuring then never compete
        with passing that byte on, and an answer that takes longer than that (a model's
        usually does) is measured while it is awaited. The observer hears of exchanges in
        the order their bodies became whole, not the order their answers began: a quick
        answer to a later request must not get it measured before an earlier one with a
        slow answer (a conversation's requests are compared in that order)."""
        assert self.on_request is not None
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(clock.answered.wait(), OBSERVE_AFTER)
            x.body = await body.whole() if whole else body.partial()
            if encoding and encoding.strip().lower() != "identity":
                x.body = await asyncio.to_thread(decoded_body, x.body, encoding)
            if clock.after is not None:
                await clock.after.wait()
            await self.on_request(x)
        finally:
            clock.told.set()

    async def _forward(self, request: web.Request, x: Exchange, target: URL,
                       headers: list[tuple[str, str]], clock: Clock, openai: bool,
                       data: AsyncIterator[bytes] | bytes | None) -> web.StreamResponse:
        assert self._session is not None
        try:
            async with self._session.request(x.method, target, headers=headers,
                                             data=data, allow_redirects=False) as up:
                return await self._relay(request, up, x, clock)
        except asyncio.CancelledError:
            x.error = x.error or "client disconnected; upstream call closed"
            raise
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            return self._fail(x, 504, f"ctxlab watch: upstream timed out ({exc or 'no answer'})",
                              openai)
        except aiohttp.ClientError as exc:
            return self._fail(x, 502, f"ctxlab watch: upstream unreachable: {exc}", openai)

    async def _relay(self, request: web.Request, up: aiohttp.ClientResponse, x: Exchange,
                     clock: Clock) -> web.StreamResponse:
        x.status, x.content_type = up.status, up.headers.get("content-type")
        x.content_encoding = up.headers.get("content-encoding")
        response = web.StreamResponse(status=up.status, reason=up.reason)
        for name, value in up.headers.items():
            if name.lower() not in HOP_BY_HOP:
                response.headers.add(name, value)
        if up.headers.get("content-length") is not None:
            response.content_length = int(up.headers["content-length"])
        await response.prepare(request)
        clock.relayed = True
        try:
            while True:
                try:
                    chunk = await up.content.readany()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    # The status line is out: cut the client off the way the upstream did.
                    kind = "went silent" if isinstance(exc, TimeoutError) else "broke"
                    x.error = f"upstream stream {kind} mid-body: {exc or type(exc).__name__}"
                    if request.transport is not None:
                        request.transport.abort()
                    return response
                if not chunk:
                    break
                if x.ttfb_ms is None:
                    x.ttfb_ms = (time.perf_counter() - clock.start) * 1000
                x.keep(chunk)  # within its budget; the client gets every byte
                await response.write(chunk)
                clock.answered.set()
            await response.write_eof()
        except ConnectionError:  # aiohttp's ClientConnectionResetError is one too
            x.error = "client disconnected; upstream call closed"
        except asyncio.CancelledError:
            x.error = "client disconnected; upstream call closed"
            raise
        finally:
            if x.error:
                up.close()
        return response

    def _fail(self, x: Exchange, status: int, message: str, openai: bool) -> web.Response:
        x.status, x.error, x.content_type = status, message, "application/json"
        body = error_body(openai, message)
        x.chunks = [body]
        return web.Response(status=status, body=body, content_type="application/json")

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
