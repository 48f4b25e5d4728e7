"""A scripted, local OpenAI API server for tests: Responses and Chat Completions.

Real clients — the Codex CLI, the official ``openai`` SDK — run against it over real HTTP,
so their streaming, retries and assembly are exercised as in production, without a network
or a key. It listens on 127.0.0.1 with an ephemeral port, in a background thread, and
answers:

* ``POST /v1/responses`` — a queued :class:`~tests.support.openai_wire.ResponsesReply` as
  JSON, or as the API's SSE event sequence when the request says ``stream: true``; a queued
  :class:`~tests.support.openai_wire.OpenAIError`; or a fault (a stream cut mid-way, a
  malformed event, ``response.failed``).
* ``POST /v1/responses/compact`` — a queued :class:`~tests.support.openai_wire.CompactReply`.
* ``POST /v1/chat/completions`` — a queued :class:`~tests.support.openai_wire.ChatReply`,
  streamed as ``chat.completion.chunk`` lines when asked.
* ``GET /v1/models`` — an empty list (clients list models at start).

When a path's queue is empty, ``responder`` (if set) is asked: a real agent decides the
order of its own calls, so a test answers by content. Every request is recorded (method,
path, lower-cased headers, parsed JSON body) in ``server.requests``; an unscripted call gets
a 400 that says nothing was queued (a real client would otherwise retry it for minutes).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from tests.support.loopback import LoopbackServer, RecordedRequest, ScriptedHandler
from tests.support.openai_wire import (
    ChatReply,
    CompactReply,
    OpenAIError,
    ResponsesReply,
    chat_chunks,
    chat_json,
    response_events,
    response_json,
)

RESPONSES = "/v1/responses"
COMPACT = "/v1/responses/compact"
CHAT = "/v1/chat/completions"
PATHS = (RESPONSES, COMPACT, CHAT)

Step = ResponsesReply | ChatReply | CompactReply | OpenAIError
Responder = Callable[[RecordedRequest], Step | None]
S = TypeVar("S", ResponsesReply, ChatReply, CompactReply, OpenAIError)


class OpenAIServer(LoopbackServer):
    """The scripted server. Use as a context manager or call ``start()`` / ``stop()``."""

    thread_name = "openai-server"

    def __init__(self, responder: Responder | None = None) -> None:
        super().__init__()
        self.answers: list[tuple[RecordedRequest, Step]] = []  # what each request was sent
        self._queues: dict[str, deque[Step]] = {path: deque() for path in PATHS}
        self.responder = responder

    @property
    def url(self) -> str:
        """The base URL a client is given (``…/v1``, as OpenAI clients expect)."""
        return f"{self.origin}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def respond(self, output: list[dict[str, Any]], **options: Any) -> ResponsesReply:
        """Queue a Responses answer with these output items (see :mod:`openai_wire`)."""
        return self._queue(RESPONSES, ResponsesReply(output=output, **options))

    def chat(self, content: str | None, **options: Any) -> ChatReply:
        return self._queue(CHAT, ChatReply(content=content, **options))

    def compact(self, output: list[dict[str, Any]], **options: Any) -> CompactReply:
        return self._queue(COMPACT, CompactReply(output=output, **options))

    def error(self, status: int, message: str, *, path: str = RESPONSES,
              **options: Any) -> OpenAIError:
        return self._queue(path, OpenAIError(status, message, **options))

    def _queue(self, path: str, step: S) -> S:
        with self._lock:
            self._queues[path].append(step)
        return step

    def requests_to(self, path: str = RESPONSES) -> list[RecordedRequest]:
        return super().requests_to(path)

    @property
    def pending(self) -> int:
        return sum(len(q) for q in self._queues.values())

    # -- used by the handler -----------------------------------------------------------------

    def next_for(self, request: RecordedRequest) -> Step | None:
        with self._lock:
            queue = self._queues[request.path]
            if queue:
                return queue.popleft()
        return self.responder(request) if self.responder is not None else None

    def answered(self, request: RecordedRequest, step: Step) -> None:
        with self._lock:
            self.answers.append((request, step))



class _Handler(ScriptedHandler):
    request_id_header = "x-request-id"
    script: OpenAIServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/v1/models":
            self.send_json(200, json.dumps({"object": "list", "data": []}).encode())
        elif self.headers.get("upgrade", "").lower() == "websocket":
            # The Responses WebSocket transport is not scripted here: 426 tells a client to
            # use HTTP at once (Codex's built-in provider tries the socket first).
            self.send_json(426, OpenAIError(426, "WebSocket is not served here; use HTTP")
                           .body(), {"connection": "close"})
        else:
            self.send_json(404, OpenAIError(404, f"no route GET {path}").body())

    def do_POST(self) -> None:
        recorded = self.record_post()
        path, body = recorded.path, recorded.body
        if path not in PATHS:
            self.send_json(404, OpenAIError(404, f"no route POST {path}").body())
            return
        if not isinstance(body, dict):
            self.send_json(400, OpenAIError(400, "We could not parse the JSON body of your "
                                                 "request.").body())
            return
        step = self.script.next_for(recorded)
        model = str(body.get("model") or "gpt-test")
        stream = bool(body.get("stream"))
        if step is None:
            step = OpenAIError(400, f"openai server: nothing queued for POST {path}")
        self.script.answered(recorded, step)
        time.sleep(step.delay if not isinstance(step, CompactReply) else 0.0)
        if isinstance(step, OpenAIError):
            self.send_json(step.status, step.body(), step.headers)
        elif isinstance(step, ResponsesReply):
            resp_id = f"resp_{self.script.next_id()}"
            if stream:
                self.send_stream(response_events(step, resp_id, model), step.event_delay,
                                 step.cut_after)
            else:
                self.send_json(200, json.dumps(response_json(step, resp_id, model)).encode())
        elif isinstance(step, ChatReply):
            chat_id = f"chatcmpl-{self.script.next_id()}"
            if stream:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self.send_stream(chat_chunks(step, chat_id, model, include_usage=usage),
                                 step.event_delay, step.cut_after)
            else:
                self.send_json(200, json.dumps(chat_json(step, chat_id, model)).encode())
        else:
            compacted = {"id": f"resp_{self.script.next_id()}", "object": "response.compaction",
                         "created_at": int(time.time()), "output": step.output,
                         "usage": step.usage}
            self.send_json(200, json.dumps(compacted).encode())

    def send_stream(self, events: list[bytes], delay: float, cut_after: int | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", f"req_{self.script.next_id()}")
        self.end_headers()
        for event in events[:cut_after]:
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
            time.sleep(delay)
        if cut_after is not None:  # the connection dies mid-body
            self.close_connection = True
            self.connection.close()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


OpenAIServer.handler = _Handler
