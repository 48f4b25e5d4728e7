"""A recorded response body back into the final Message object, streamed or not.

The proxy never parses while it streams (bytes go to the client as they arrive); once the
exchange is over, this module rebuilds what the SDK's own accumulator would hold at the
end: the ``message_start`` message with each content block assembled from its deltas and
``message_delta``'s stop reason and usage merged in. It works on plain dicts so unknown
block or delta kinds survive as they came instead of being dropped.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerEvent:
    event: str | None
    data: str


def parse_sse(text: str) -> list[ServerEvent]:
    """Split an SSE body into events (``event:`` / ``data:`` lines, blank-line separated)."""
    events: list[ServerEvent] = []
    name: str | None = None
    data: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data or name:
                events.append(ServerEvent(name, "\n".join(data)))
            name, data = None, []
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
    if data:
        events.append(ServerEvent(name, "\n".join(data)))
    return events


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], partial: dict[int, str],
                 index: int) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif kind == "input_json_delta":
        partial[index] = partial.get(index, "") + delta.get("partial_json", "")
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def assemble_stream(events: list[ServerEvent]) -> tuple[dict[str, Any] | None, dict | None]:
    """The final Message of an SSE stream and the stream's ``error`` event, if any.

    A stream cut before ``message_start`` gives ``None``; a stream cut later gives what had
    arrived (as the SDK's snapshot would).
    """
    message: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    for event in events:
        try:
            data = json.loads(event.data)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type", event.event)
        if kind == "error":
            error = data
        elif kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"])
            message["content"] = list(message.get("content") or [])
        elif message is None:
            continue
        elif kind == "content_block_start":
            message["content"].append(dict(data.get("content_block") or {}))
        elif kind == "content_block_delta":
            index = data.get("index", len(message["content"]) - 1)
            if 0 <= index < len(message["content"]):
                _apply_delta(message["content"][index], data.get("delta") or {}, partial, index)
        elif kind == "content_block_stop":
            index = data.get("index", -1)
            if index in partial and 0 <= index < len(message["content"]):
                try:
                    message["content"][index]["input"] = json.loads(partial.pop(index) or "{}")
                except ValueError:
                    pass  # a cut tool input stays as it was started
        elif kind == "message_delta":
            for key, value in (data.get("delta") or {}).items():
                message[key] = value
            usage = data.get("usage")
            if isinstance(usage, dict):
                message["usage"] = {**(message.get("usage") or {}),
                                    **{k: v for k, v in usage.items() if v is not None}}
    return message, error


def decode_body(raw: bytes, encoding: str | None) -> bytes | None:
    """The body as the server meant it: gzip/deflate undone (the proxy forwards it encoded).

    ``None`` for an encoding this module cannot undo; the bytes still reached the client.
    """
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return raw
    try:
        if encoding in ("gzip", "x-gzip", "deflate"):
            return zlib.decompressobj(wbits=47).decompress(raw)  # gzip or zlib header
        if encoding == "br":
            import brotli  # type: ignore[import-not-found]

            return brotli.decompress(raw)
    except Exception:  # no brotli, or a corrupt body: a body this side cannot read
        return None
    return None


def response_object(raw: bytes, content_type: str | None, encoding: str | None
                    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The final Message (or error body) of a response, and a stream's error event."""
    body = decode_body(raw, encoding)
    if body is None:
        return None, None
    text = body.decode("utf-8", errors="replace")
    if "text/event-stream" in (content_type or ""):
        return assemble_stream(parse_sse(text))
    try:
        value = json.loads(text) if text.strip() else None
    except ValueError:
        return None, None
    if isinstance(value, dict) and value.get("type") == "error":
        return value, value
    return (value, None) if isinstance(value, dict) else (None, None)
