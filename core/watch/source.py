"""The watch as an event source: ``await WatchSource(options).run(emit)`` until cancelled.

It starts the proxy and turns each exchange into events: ``watch_request`` (the measure,
the purpose guess and the difference with the previous request of the conversation), the
client's own compaction as ``stage`` events with ``by="client"``, then ``watch_response``
(status, stop reason, the real usage, timing, what went wrong). Every Messages call is
appended to the recording. Parsing and measuring run in a worker thread, one request at a
time in arrival order, so a body of tens of MB never stalls the proxy or a UI.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.events import Error, Event, WatchRequest, WatchResponse, WatchStart
from core.watch.analysis import analyse_request, response_facts
from core.watch.conversations import Conversations
from core.watch.proxy import DEFAULT_UPSTREAM, Exchange, WatchProxy
from core.watch.recording import Recording, record_line, recording_path
from core.watch.sse import response_object

Emit = Callable[[Event], Any]
KEEP_BODIES = 32  # request bodies kept for a viewer, newest first out of the window


@dataclass
class WatchOptions:
    upstream: str = DEFAULT_UPSTREAM
    host: str = "127.0.0.1"
    port: int = 8787
    root: Path = field(default_factory=Path.cwd)  # the recording goes under root/.ctxlab/watch
    record: bool = True
    read_timeout: float = 600.0  # seconds without a byte from the upstream before a 504


def is_messages_call(path: str) -> bool:
    return path.rstrip("/").endswith("/v1/messages")


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="milliseconds")


def _error_text(error: dict[str, Any] | None) -> str | None:
    if not isinstance(error, dict):
        return None
    inner = error.get("error") if isinstance(error.get("error"), dict) else error
    return f"{inner.get('type', 'error')}: {inner.get('message', '')}".strip()


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        return None


def measure_request(x: Exchange, conversations: Conversations
                    ) -> tuple[Any, WatchRequest, tuple[Event, ...]]:
    """The parsed body, its ``watch_request`` and the client stages it reveals (pure but for
    ``conversations``, which remembers the previous request of each conversation)."""
    body = _parse(x.body)
    base = {"id": x.id, "method": x.method, "path": x.path, "time": _iso(x.started),
            "body_bytes": len(x.body)}
    if not isinstance(body, dict) or not x.path.rstrip("/").endswith(
            ("/v1/messages", "/count_tokens")):
        return body, WatchRequest(**base), ()
    facts = analyse_request(x.path, body)
    change = conversations.observe(x.id, body) if is_messages_call(x.path) else None
    event = WatchRequest(
        **base, model=facts.model, purpose=facts.purpose, stream=facts.stream,
        conversation=change.conversation if change else None, messages=facts.messages,
        chars=facts.chars, est_tokens=facts.est_tokens, categories=facts.categories,
        appended=change.appended if change else 0, removed=change.removed if change else 0,
        rewritten=change.rewritten if change else 0)
    return body, event, change.stages if change else ()


def response_event(x: Exchange) -> tuple[dict[str, Any] | None, WatchResponse]:
    """The final Message (or error body) of a finished exchange, and its ``watch_response``."""
    message, error = response_object(x.response, x.content_type, x.content_encoding)
    stop_reason, usage = response_facts(message)
    return message, WatchResponse(
        id=x.id, status=x.status, stop_reason=stop_reason, usage=usage,
        duration_ms=round(x.duration_ms or 0.0, 3),
        ttfb_ms=None if x.ttfb_ms is None else round(x.ttfb_ms, 3),
        error=x.error or _error_text(error))


class WatchSource:
    """Proxy + analysis + recording, speaking events."""

    def __init__(self, options: WatchOptions) -> None:
        self.options = options
        self.recording = Recording(recording_path(options.root)) if options.record else None
        self.conversations = Conversations()
        self.proxy = WatchProxy(options.upstream, host=options.host, port=options.port,
                                on_request=self._on_request, on_response=self._on_response,
                                read_timeout=options.read_timeout)
        self.ready = asyncio.Event()
        self._emit: Emit = lambda event: None
        self._bodies: dict[int, asyncio.Future[Any]] = {}
        self._order = asyncio.Lock()
        self._kept: OrderedDict[int, bytes] = OrderedDict()

    async def run(self, emit: Emit) -> None:
        """Serve until cancelled; the proxy is closed on the way out."""
        self._emit = emit
        await self.proxy.start()
        try:
            where = str(self.recording.path) if self.recording else ""
            emit(WatchStart(listen=self.proxy.url, upstream=str(self.proxy.upstream),
                            recording=where))
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            await self.proxy.stop()

    def body(self, request_id: int) -> bytes | None:
        """The body of one of the last :data:`KEEP_BODIES` requests, as the client sent it."""
        return self._kept.get(request_id)

    # -- observers (called by the proxy) ---------------------------------------------------

    def _body_future(self, x: Exchange) -> asyncio.Future[Any]:
        return self._bodies.setdefault(x.id, asyncio.get_running_loop().create_future())

    async def _on_request(self, x: Exchange) -> None:
        future = self._body_future(x)
        self._kept[x.id] = x.body
        while len(self._kept) > KEEP_BODIES:
            self._kept.popitem(last=False)
        body: Any = None
        try:
            async with self._order:
                body, event, stages = await asyncio.to_thread(self._measure, x)
            for each in (event, *stages):
                self._emit(each)
        except Exception as exc:  # a body this side cannot measure: say so, keep proxying
            self._emit(Error(message=f"watch: request {x.id} not analysed: {exc}",
                             kind="watch"))
        finally:
            if not future.done():
                future.set_result(body)

    def _measure(self, x: Exchange) -> tuple[Any, WatchRequest, tuple[Event, ...]]:
        return measure_request(x, self.conversations)

    async def _on_response(self, x: Exchange) -> None:
        body = await self._body_future(x)
        self._bodies.pop(x.id, None)
        try:
            event: Event = await asyncio.to_thread(self._finish, x, body)
        except Exception as exc:  # the client got its answer; only the watch lost it
            event = Error(message=f"watch: response {x.id} not recorded: {exc}", kind="watch")
        self._emit(event)

    def _finish(self, x: Exchange, body: Any) -> WatchResponse:
        message, event = response_event(x)
        if self.recording is not None and is_messages_call(x.path) and isinstance(body, dict):
            self.recording.append(record_line(
                body, message, timestamp=_iso(x.started), status=x.status,
                duration_ms=event.duration_ms, ttfb_ms=event.ttfb_ms, error=event.error))
        return event
