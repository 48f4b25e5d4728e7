"""A loopback Messages-API upstream that answers heavy: huge streams and compression bombs.

For the watch's memory tests and its soak (``bench/bench_watch_soak.py``). The request's
``model`` picks the answer, so a client needs nothing but the SDK or ``http.client``:

* ``stream-<MB>`` — an SSE stream of about that many MB of ``text_delta`` events, generated
  as it is sent (the server holds one event, never the stream), ending with the usual
  ``message_delta`` (``stop_reason`` and ``usage``) and ``message_stop``;
* ``bomb-<MB>`` — a JSON body, ``content-encoding: gzip``, that decompresses to that many
  MB (zeros after a valid start); compressed once per size and cached;
* anything else — a small Message.

The request body is read and dropped: the server holds no request.
"""

from __future__ import annotations

import json
import threading
import zlib
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"input_tokens": 25, "output_tokens": 12}
MESSAGE = {"id": "msg_heavy", "type": "message", "role": "assistant", "model": "heavy",
           "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
           "stop_sequence": None, "usage": USAGE}


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


@lru_cache(maxsize=4)
def bomb(megabytes: int) -> bytes:
    """A gzip body of ``megabytes`` MB once decompressed: a JSON start, then zeros."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(b'{"type": "message", "content": [{"type": "text", "text": "')]
    block = b"0" * (1 << 20)
    out += [packer.compress(block) for _ in range(megabytes)]
    out.append(packer.compress(b'"}]}') + packer.flush())
    return b"".join(out)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        left = int(self.headers.get("content-length") or 0)
        model = ""
        head = b""
        while left:  # read and drop; remember the start, where "model" is
            piece = self.rfile.read(min(left, 1 << 20))
            if not piece:
                break
            head = head or piece[:4096]
            left -= len(piece)
        try:
            model = str(json.loads(head).get("model", ""))
        except ValueError:
            start = head.find(b'"model": "')
            model = head[start + 10:head.find(b'"', start + 10)].decode() if start >= 0 else ""
        kind, _, size = model.partition("-")
        if kind == "stream" and size.isdigit():
            self._stream(int(size))
        elif kind == "bomb" and size.isdigit():
            self._send(bomb(int(size)), "application/json", {"content-encoding": "gzip"})
        else:
            self._send(json.dumps(MESSAGE).encode(), "application/json")

    def _send(self, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, megabytes: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        start = {**MESSAGE, "content": [], "stop_reason": None,
                 "usage": {"input_tokens": 25, "output_tokens": 1}}
        delta = _event({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": "streamed text " * 4}})
        batch = delta * max(1, (64 << 10) // len(delta))
        head = (_event({"type": "message_start", "message": start})
                + _event({"type": "content_block_start", "index": 0,
                          "content_block": {"type": "text", "text": ""}}))
        self._chunk(head)
        for _ in range((megabytes << 20) // len(batch)):
            self._chunk(batch)
        self._chunk(_event({"type": "content_block_stop", "index": 0})
                    + _event({"type": "message_delta",
                              "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 12}})
                    + _event({"type": "message_stop"}))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


class HeavyUpstream:
    """``with HeavyUpstream() as up: up.url``: the server on an ephemeral loopback port."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HeavyUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
