"""A scripted, local Anthropic Messages-API server for tests.

Tests drive the real SDK over real HTTP against it, so retries, streaming and error typing
are exercised exactly as in production, without a network or an API key. It listens on
127.0.0.1 with an ephemeral port, in a background thread, and answers:

* ``POST /v1/messages`` — a queued reply as JSON, or as the real SSE event sequence when the
  request asks to stream (``message_start``, ``ping``, ``content_block_start``,
  ``content_block_delta`` with ``text_delta`` / ``input_json_delta``, ``content_block_stop``,
  ``message_delta``, ``message_stop``); or a queued HTTP error with an Anthropic-shaped body;
  or a fault (a stream cut mid-way, a malformed event, a delay).
* Requests the real API would refuse (a beta field without its ``anthropic-beta`` header, a
  compaction trigger under the minimum, more than four ``cache_control`` breakpoints) get
  its kind of 400 before any queued step is used (:mod:`tests.support.messages_rules`);
  a reply may carry ``context_management`` (``applied_edits``), ``compaction`` blocks and
  ``usage`` with cache fields and ``iterations``.
* ``POST /v1/messages/count_tokens`` — a queued count or error; when nothing is queued, a
  rough estimate (request bytes / 4) so incidental counting never fails a test.

Every request is recorded (method, path, lower-cased headers, parsed JSON body) in
``server.requests``. Each endpoint has its own FIFO queue; an unscripted ``/v1/messages``
call gets a non-retryable 400 that says nothing was queued.
"""

from __future__ import annotations

import json
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from tests.support.loopback import LoopbackServer, RecordedRequest, ScriptedHandler
from tests.support.messages_rules import request_problem
from tests.support.messages_wire import CountReply, ErrorReply, Reply, message_json, stream_events

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
# Retryable errors carry this unless the test says otherwise: the SDK honours it, so a
# retry costs a millisecond instead of its default half-second back-off.
FAST_RETRY = {"retry-after-ms": "1", "retry-after": "0"}


class MessagesServer(LoopbackServer):
    """The scripted server. Use as a context manager or call ``start()`` / ``stop()``."""

    thread_name = "messages-server"

    def __init__(self) -> None:
        super().__init__()
        self._queues: dict[str, deque[Any]] = {MESSAGES: deque(), COUNT_TOKENS: deque()}
        # Asked when a queue is empty: a real client (Claude Code) makes calls a test cannot
        # order in advance (titles, summaries, parallel tool turns), so it answers by content.
        self.responder: Callable[[RecordedRequest], Reply | ErrorReply | None] | None = None

    @property
    def url(self) -> str:
        """The base URL to hand the SDK (``base_url=server.url``)."""
        return self.origin

    # -- scripting /v1/messages ------------------------------------------------------------

    def reply(self, content: list[dict[str, Any]], **options: Any) -> Reply:
        """Queue a message with these content blocks (options: see :class:`Reply`)."""
        reply = Reply(content=content, **options)
        self._queues[MESSAGES].append(reply)
        return reply

    def reply_text(self, text: str, **options: Any) -> Reply:
        return self.reply([{"type": "text", "text": text}], **options)

    def reply_tool_use(
        self,
        name: str,
        input: dict[str, Any],
        *,
        id: str | None = None,
        text: str | None = None,
        **options: Any,
    ) -> Reply:
        """Queue a tool call (optionally after some text); stop_reason is ``tool_use``."""
        blocks = [{"type": "text", "text": text}] if text else []
        block_id = id or f"toolu_{next(self._ids):04d}"
        blocks.append({"type": "tool_use", "id": block_id, "name": name, "input": input})
        options.setdefault("stop_reason", "tool_use")
        return self.reply(blocks, **options)

    def reply_compaction(self, summary: str | None, text: str | None = None,
                         **options: Any) -> Reply:
        """Queue a server compaction: a ``compaction`` block (then ``text``, unless the
        request paused after compaction: ``stop_reason="compaction"``)."""
        blocks: list[dict[str, Any]] = [{"type": "compaction", "content": summary}]
        if text is not None:
            blocks.append({"type": "text", "text": text})
        else:
            options.setdefault("stop_reason", "compaction")
        return self.reply(blocks, **options)

    def error(
        self,
        status: int,
        error_type: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        path: str = MESSAGES,
    ) -> ErrorReply:
        """Queue an HTTP error with an Anthropic-shaped body."""
        error = ErrorReply(status, error_type, message, dict(headers or {}), delay)
        self._queues[path].append(error)
        return error

    def overflow(self) -> ErrorReply:
        return self.error(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        )

    def too_large(self) -> ErrorReply:
        return self.error(413, "request_too_large", "Request exceeds the maximum allowed size.")

    def unauthorized(self) -> ErrorReply:
        return self.error(401, "authentication_error", "invalid x-api-key")

    def rate_limited(self, headers: dict[str, str] | None = None) -> ErrorReply:
        return self.error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit.",
            headers=FAST_RETRY if headers is None else headers,
        )

    def overloaded(self, headers: dict[str, str] | None = None) -> ErrorReply:
        return self.error(
            529,
            "overloaded_error",
            "Overloaded",
            headers=FAST_RETRY if headers is None else headers,
        )

    def cut_stream(self, text: str, after_events: int = 4, *, clean_end: bool = False) -> Reply:
        """Queue a text stream that stops after ``after_events`` events: the connection is
        dropped mid-body, or (``clean_end``) the body ends properly without message_stop."""
        return self.reply_text(text, cut_after=after_events, clean_end=clean_end)

    def stream_error(
        self,
        text: str,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        after_events: int = 3,
    ) -> Reply:
        """Queue a stream that starts well, then sends an SSE ``error`` event (streaming
        requests only; the HTTP status is already 200 by then, as with the real API)."""
        failure = ErrorReply(200, error_type, message)
        return self.reply_text(text, error_event=failure, error_after=after_events)

    # -- scripting count_tokens ------------------------------------------------------------

    def count(self, input_tokens: int) -> None:
        self._queues[COUNT_TOKENS].append(CountReply(input_tokens))

    def count_error(
        self,
        status: int = 500,
        error_type: str = "api_error",
        message: str = "Internal server error",
    ) -> ErrorReply:
        return self.error(
            status, error_type, message, path=COUNT_TOKENS, headers={"x-should-retry": "false"}
        )

    # -- reading what arrived --------------------------------------------------------------

    def requests_to(self, path: str = MESSAGES) -> list[RecordedRequest]:
        return super().requests_to(path)

    @property
    def pending(self) -> int:
        """Scripted responses not yet consumed (all endpoints)."""
        return sum(len(q) for q in self._queues.values())

    # -- used by the handler ---------------------------------------------------------------

    def next_for(self, path: str, request: RecordedRequest | None = None) -> Any:
        with self._lock:
            queue = self._queues.get(path)
            if queue:
                return queue.popleft()
        if self.responder is not None and request is not None and path == MESSAGES:
            return self.responder(request)
        return None


class _Handler(ScriptedHandler):
    script: MessagesServer  # set on the per-server subclass

    def do_HEAD(self) -> None:
        """Clients probe reachability with ``HEAD /`` (Claude Code does at start)."""
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        recorded = self.record_post()
        path, body, headers, raw = recorded.path, recorded.body, recorded.headers, recorded.raw
        if path not in (MESSAGES, COUNT_TOKENS):
            self.send_json(404, ErrorReply(404, "not_found_error", f"no route {path}").body())
            return
        problem = request_problem(body, headers) if path == MESSAGES else None
        if problem is not None:  # refused like the API would, before any scripted step
            refusal = ErrorReply(400, "invalid_request_error", problem, {"x-should-retry": "false"})
            self.send_json(400, refusal.body(), refusal.headers)
            return
        step = self.script.next_for(path, recorded)
        if isinstance(step, ErrorReply):
            time.sleep(step.delay)
            self.send_json(step.status, step.body(), step.headers)
        elif isinstance(step, CountReply):
            self.send_json(200, json.dumps({"input_tokens": step.input_tokens}).encode())
        elif path == COUNT_TOKENS:
            self.send_json(200, json.dumps({"input_tokens": max(len(raw) // 4, 1)}).encode())
        elif isinstance(step, Reply):
            time.sleep(step.delay)
            self.send_message(step, stream=bool(isinstance(body, dict) and body.get("stream")))
        else:
            unscripted = ErrorReply(
                400,
                "invalid_request_error",
                f"messages server: no response queued for POST {path}",
                {"x-should-retry": "false"},
            )
            self.send_json(400, unscripted.body(), unscripted.headers)

    def send_message(self, reply: Reply, *, stream: bool) -> None:
        msg_id = f"msg_{self.script.next_id()}"
        if not stream:
            self.send_json(200, json.dumps(message_json(reply, msg_id)).encode())
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_{self.script.next_id()}")
        self.end_headers()
        events = stream_events(reply, msg_id)
        if reply.cut_after is not None:
            events = events[: reply.cut_after]
        for event in events:
            self.write_chunk(event)
            time.sleep(reply.event_delay)
        if reply.cut_after is not None and not reply.clean_end:
            self.drop_connection()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def drop_connection(self) -> None:
        """Close the socket mid-body, as a dying proxy or server would."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


MessagesServer.handler = _Handler


def unused_port_url() -> str:
    """A base URL on which nothing listens (the port was bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
