"""The watch holds bounded memory whatever the traffic.

Counted, not timed: the characters a stream's assembly copies, the bytes a decompression
produces, the bodies and conversations held after many requests.
"""

from __future__ import annotations

import json
import tracemalloc
import zlib
from types import SimpleNamespace

import pytest

from core.watch import sse
from core.watch.sse import DECODED_LIMIT, ServerEvent, assemble_stream, decoded


class Piece(str):
    """A delta's text that counts the characters every ``+`` it takes part in copies."""

    copied = 0

    def __radd__(self, other: str) -> str:
        Piece.copied += len(other) + len(self)
        return str.__add__(other, self)

    def __add__(self, other: str) -> str:
        Piece.copied += len(other) + len(self)
        return str.__add__(self, other)


def _counting_loads(text: str):
    def hook(value: dict):
        for key in ("text", "partial_json", "thinking"):
            if isinstance(value.get(key), str):
                value[key] = Piece(value[key])
        return value

    return json.loads(text, object_hook=hook)


def _stream(deltas: int) -> list[ServerEvent]:
    def event(data: dict) -> ServerEvent:
        return ServerEvent(data["type"], json.dumps(data))

    events = [event({"type": "message_start",
                     "message": {"id": "m", "role": "assistant", "content": []}})]
    kinds = (("text", "text_delta", "text"), ("thinking", "thinking_delta", "thinking"),
             ("tool_use", "input_json_delta", "partial_json"))
    for index, (block, delta, key) in enumerate(kinds):
        start = {"type": block, block if block != "tool_use" else "input": ""}
        if block == "tool_use":
            start = {"type": "tool_use", "id": "t", "name": "n", "input": {}}
        events.append(event({"type": "content_block_start", "index": index,
                             "content_block": start}))
        if block == "tool_use":
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: '{"a": "'}}))
        for _ in range(deltas):
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: "0123456789"}}))
        if block == "tool_use":
            events.append(event({"type": "content_block_delta", "index": index,
                                 "delta": {"type": delta, key: '"}'}}))
        events.append(event({"type": "content_block_stop", "index": index}))
    return events


def test_a_stream_of_many_deltas_is_assembled_in_linear_time(monkeypatch):
    """Before, each delta was added with ``s = s + delta``: 5,000 deltas of 10 characters
    copied 375 million characters; 34 MB of text deltas took 17.5 s."""
    monkeypatch.setattr(sse, "json", SimpleNamespace(loads=_counting_loads))
    deltas = 5_000
    Piece.copied = 0
    message, _ = assemble_stream(_stream(deltas))
    total = 3 * deltas * 10
    text, thinking, tool = message["content"]
    assert len(text["text"]) == len(thinking["thinking"]) == deltas * 10
    assert tool["input"] == {"a": "0123456789" * deltas}
    assert Piece.copied <= 4 * total, f"{Piece.copied:,} characters copied for {total:,}"


def _bomb(size: int, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(size >> 20)) + packer.flush()


@pytest.mark.parametrize("wbits", [31, 15], ids=["gzip", "deflate"])
def test_a_compression_bomb_is_cut_at_the_limit_and_says_so(wbits):
    """Before, a gzip body was decompressed whole: 64 kB on the wire, 64 MB in memory."""
    limit = 1 << 20
    bomb = _bomb(64 * limit, wbits)
    assert len(bomb) < limit // 8
    tracemalloc.start()
    try:
        body, truncated = decoded(bomb, "gzip" if wbits == 31 else "deflate", limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert truncated and body is not None and len(body) == limit
    assert peak < 3 * limit
    assert DECODED_LIMIT == 16 << 20  # the limit the watch reads with (docs/WATCH.md)
    small, cut = decoded(zlib.compress(b"{}"), "deflate")
    assert (small, cut) == (b"{}", False)
