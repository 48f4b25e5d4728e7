"""A recorded response body back into the final Message object, streamed or not.

The proxy never parses while it streams (bytes go to the client as they arrive); once the
exchange is over, this module rebuilds what the SDK's own accumulator would hold at the
end: the ``message_start`` message with each content block assembled from its deltas and
``message_delta``'s stop reason and usage merged in. It works on plain dicts so unknown
block or delta kinds survive as they came instead of being dropped.

Deltas are collected in lists and joined once per block, so assembling a stream takes time
linear in its length (``s = s + delta`` copied the whole text at every delta, quadratic in
the stream's length). A compressed body (gzip, deflate, brotli, zstd) is decompressed to
at most :data:`DECODED_LIMIT` bytes, so a small gzip bomb never becomes gigabytes here;
what is cut is said, and a body that cannot be decoded raises :class:`UnreadableBody` (an
empty answer in its place would be recorded as ``null`` with nothing said).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerEvent:
    event: str | None
    data: str


_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


def iter_sse(text: str) -> Iterator[ServerEvent]:
    """The events of an SSE body (``event:`` / ``data:`` lines, blank-line separated), one
    at a time: a 16 MB stream is never split into a list of its lines or its events."""
    name: str | None = None
    data: list[str] = []
    for match in _LINE.finditer(text):
        line, end = match.group(1), match.group(2)
        if not line:
            if data or name:
                yield ServerEvent(name, "\n".join(data))
            name, data = None, []
        elif not line.startswith(":"):
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        if not end:
            break
    if data:
        yield ServerEvent(name, "\n".join(data))


def parse_sse(text: str) -> list[ServerEvent]:
    """Every event of an SSE body, as a list (see :func:`iter_sse`)."""
    return list(iter_sse(text))


DECODED_LIMIT = 16 << 20  # bytes of a response body decompressed for reading, at most
_TEXT_DELTAS = {"text_delta": "text", "thinking_delta": "thinking"}


def _apply_delta(block: dict[str, Any], delta: dict[str, Any],
                 parts: dict[tuple[int, str], list[str]], index: int) -> None:
    kind = delta.get("type")
    if kind in _TEXT_DELTAS:
        key = _TEXT_DELTAS[kind]
        parts.setdefault((index, key), [block.get(key, "")]).append(delta.get(key, ""))
    elif kind == "input_json_delta":
        parts.setdefault((index, "partial_json"), []).append(delta.get("partial_json", ""))
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def _close_block(message: dict[str, Any], index: int,
                 parts: dict[tuple[int, str], list[str]]) -> None:
    """Join a block's collected deltas into it (once: linear in the deltas' length)."""
    if not 0 <= index < len(message["content"]):
        return
    block = message["content"][index]
    for key in ("text", "thinking"):
        if (index, key) in parts:
            block[key] = "".join(str(p) for p in parts.pop((index, key)))
    if (index, "partial_json") in parts:
        raw = "".join(str(p) for p in parts.pop((index, "partial_json")))
        try:
            block["input"] = json.loads(raw or "{}")
        except ValueError:
            pass  # a cut tool input stays as it was started


def assemble_stream(events: Iterable[ServerEvent]) -> tuple[dict[str, Any] | None, dict | None]:
    """The final Message of an SSE stream and the stream's ``error`` event, if any.

    A stream cut before ``message_start`` gives ``None``; a stream cut later gives what had
    arrived (as the SDK's snapshot would).
    """
    message: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    parts: dict[tuple[int, str], list[str]] = {}
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
            parts = {}
        elif message is None:
            continue
        elif kind == "content_block_start":
            message["content"].append(dict(data.get("content_block") or {}))
        elif kind == "content_block_delta":
            index = data.get("index", len(message["content"]) - 1)
            if isinstance(index, int) and 0 <= index < len(message["content"]):
                _apply_delta(message["content"][index], data.get("delta") or {}, parts, index)
        elif kind == "content_block_stop":
            index = data.get("index", -1)
            if isinstance(index, int):
                _close_block(message, index, parts)
        elif kind == "message_delta":
            for key, value in (data.get("delta") or {}).items():
                message[key] = value
            usage = data.get("usage")
            if isinstance(usage, dict):
                message["usage"] = {**(message.get("usage") or {}),
                                    **{k: v for k, v in usage.items() if v is not None}}
    if message is not None:  # a cut stream: text that arrived is kept, a cut input is not
        for index, key in [k for k in parts if k[1] != "partial_json"]:
            _close_block(message, index, {(index, key): parts[(index, key)]})
    return message, error


INFLATE_SLICE = 1 << 16  # compressed bytes handed to zlib at a time


def _inflate(raw: bytes, limit: int) -> tuple[bytes, bool]:
    """Every member of a gzip body (a server that compresses per flush sends several, which
    ``gzip`` readers join: RFC 1952), or a zlib one, up to ``limit`` bytes. The body is fed
    in slices, so a body of many small members costs its length, not its length squared
    (each member's leftover would otherwise be the whole rest of the body, copied)."""
    view, out, size, at = memoryview(raw), [], 0, 0
    unpacker, pending = zlib.decompressobj(wbits=47), b""  # a gzip or zlib header
    while size < limit:
        if not pending:
            if at >= len(raw):
                break
            pending = bytes(view[at:at + INFLATE_SLICE])
            at += len(pending)
        if unpacker.eof:  # the next member (zeros between members pad: RFC 1952)
            pending = pending.lstrip(b"\0")
            if not pending:
                continue
            unpacker = zlib.decompressobj(wbits=47)
        piece = unpacker.decompress(pending, limit - size)
        out.append(piece)
        size += len(piece)
        pending = unpacker.unconsumed_tail or unpacker.unused_data
    return b"".join(out), size >= limit and (bool(pending.strip(b"\0")) or at < len(raw))


def _unbrotli(raw: bytes, limit: int) -> tuple[bytes, bool]:
    import brotli

    unpacker, out, size = brotli.Decompressor(), [], 0
    for start in range(0, len(raw), 256):  # small pieces: stop soon after the limit
        piece = unpacker.process(raw[start:start + 256])
        out.append(piece)
        size += len(piece)
        if size >= limit:
            return b"".join(out)[:limit], True
    return b"".join(out), False


def _unzstd(raw: bytes, limit: int) -> tuple[bytes, bool]:
    """Every frame of a zstd body (RFC 8878 lets a body hold several, as a server that
    compresses per flush sends it), up to ``limit`` bytes."""
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    out: list[bytes] = []
    size = 0
    while size < limit and (piece := reader.read(limit - size)):
        out.append(piece)
        size += len(piece)
    return b"".join(out), size >= limit and bool(reader.read(1))


class UnreadableBody(ValueError):
    """A response body this side cannot decode (an unknown encoding, a decoder that is not
    installed, corrupt bytes); the message says which. The client got the bytes as sent."""


_DECODERS = {"gzip": _inflate, "x-gzip": _inflate, "deflate": _inflate, "br": _unbrotli,
             "zstd": _unzstd}
_PACKAGES = {"br": "brotli", "zstd": "zstandard"}  # the decoders that need a package


def decoded(raw: bytes, encoding: str | None, limit: int = DECODED_LIMIT
            ) -> tuple[bytes, bool]:
    """The body as the server meant it (the proxy forwards it encoded), at most ``limit``
    bytes of it, and whether it was cut there.

    Raises :class:`UnreadableBody` when it cannot be decoded here: a reader that took the
    failure for an empty body would record ``null`` and say nothing.
    """
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity") or not raw:  # no bytes decode to no bytes
        return raw, False
    decoder = _DECODERS.get(encoding)
    if decoder is None:
        raise UnreadableBody(f"{encoding}-encoded, an encoding the watch does not know")
    try:
        return decoder(raw, limit)
    except ImportError:
        raise UnreadableBody(f"{encoding}-encoded, and the {_PACKAGES.get(encoding)} package "
                             "is not installed") from None
    except Exception as exc:  # zlib.error, brotli.error, ZstdError: the bytes are not valid
        raise UnreadableBody(f"{encoding}-encoded, but not valid {encoding} ({exc})") from None


def decode_body(raw: bytes, encoding: str | None) -> bytes | None:
    """:func:`decoded` without saying whether it was cut; ``None`` for a body it cannot
    decode."""
    try:
        return decoded(raw, encoding)[0]
    except UnreadableBody:
        return None


def read_response(raw: bytes, content_type: str | None, encoding: str | None
                  ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """The final Message (or error body) of a response, a stream's error event, and whether
    decompression stopped at :data:`DECODED_LIMIT`; :class:`UnreadableBody` when the body
    cannot be decoded."""
    body, cut = decoded(raw, encoding)
    text = body.decode("utf-8", errors="replace")
    del body
    if "text/event-stream" in (content_type or ""):
        return (*assemble_stream(iter_sse(text)), cut)
    try:
        value = json.loads(text) if text.strip() else None
    except ValueError:
        return None, None, cut
    if isinstance(value, dict) and value.get("type") == "error":
        return value, value, cut
    return (value, None, cut) if isinstance(value, dict) else (None, None, cut)


def response_object(raw: bytes, content_type: str | None, encoding: str | None
                    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The final Message (or error body) of a response, and a stream's error event."""
    return read_response(raw, content_type, encoding)[:2]
