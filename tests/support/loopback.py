"""What every scripted API server of the tests shares: a threaded HTTP server on
127.0.0.1 with an ephemeral port, started and stopped around a test, that records each
request it gets.

The servers differ only in what they answer (:mod:`tests.support.messages_server` speaks
the Messages API, :mod:`tests.support.openai_server` OpenAI's APIs); a test reads what
arrived the same way from both.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any, Self

from tests.support.messages_rules import unmarked


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes

    @property
    def plain(self) -> Any:
        """The body without prompt-cache breakpoints, in the shape the agent built it (for
        tests about content, not caching): see :func:`~tests.support.messages_rules.unmarked`."""
        return unmarked(self.body)


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops the SYNs of a burst of connections (ten
    # concurrent streams through a proxy), which the kernel retries only a second later.
    request_queue_size = 64

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeouts, cut streams) is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedHandler(BaseHTTPRequestHandler):
    """The request handler both servers start from: HTTP/1.1, quiet, and JSON answers that
    carry a request id under the API's own header name."""

    protocol_version = "HTTP/1.1"
    # Send each SSE event at once, as the real APIs do: with Nagle's algorithm the event
    # after the headers waits for an ACK that a client may delay by 40 ms.
    disable_nagle_algorithm = True
    request_id_header = "request-id"  # Anthropic's; OpenAI's is x-request-id
    script: LoopbackServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def record_post(self) -> RecordedRequest:
        """Read the POST body (JSON, or ``None`` when it is not), and record the request."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = RecordedRequest("POST", self.path.split("?", 1)[0],
                                   {k.lower(): v for k, v in self.headers.items()}, body, raw)
        self.script.record(recorded)
        return recorded

    def send_json(self, status: int, payload: bytes, headers: dict[str, str] | None = None
                  ) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header(self.request_id_header, f"req_{self.script.next_id()}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class LoopbackServer:
    """Start with ``start()`` or as a context manager. A subclass names its request
    ``handler`` (which reaches the server as ``self.script``)."""

    handler: type[BaseHTTPRequestHandler]
    thread_name = "scripted-server"

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = count(1)
        self._httpd: QuietHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        handler = type("Handler", (self.handler,), {"script": self})
        self._httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True, name=self.thread_name)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """Scheme, host and port: what a client or a proxy in front of it is given."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def next_id(self) -> str:
        return f"{next(self._ids):04d}"
