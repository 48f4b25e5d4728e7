"""What the scripted Messages server sends: queued replies and their wire format.

The SSE sequence follows the real API (``message_start``, ``ping``, then per block
``content_block_start`` / ``content_block_delta`` / ``content_block_stop``, then
``message_delta`` with the stop reason and usage, then ``message_stop``), because the SDK's
stream accumulator is what the provider tests exercise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DEFAULT_USAGE = {"input_tokens": 25, "output_tokens": 12}


@dataclass
class Reply:
    """A successful message; streamed or not, as the request asks."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    model: str = "claude-test"
    chunk: int = 4  # characters per text_delta / input_json_delta
    delay: float = 0.0  # seconds before answering
    event_delay: float = 0.0  # seconds between SSE events
    cut_after: int | None = None  # stream only: events sent before the connection drops
    clean_end: bool = False  # with cut_after: end the body properly instead of dropping
    malformed_at: int | None = None  # stream only: send a garbage event at this position
    error_event: ErrorReply | None = None  # stream only: an SSE error event replaces the end
    error_after: int = 3  # events sent before the error event
    context_management: dict[str, Any] | None = None  # e.g. {"applied_edits": [...]}


@dataclass
class ErrorReply:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def body(self) -> bytes:
        error = {"type": self.error_type, "message": self.message}
        return json.dumps({"type": "error", "error": error}).encode()


@dataclass
class CountReply:
    input_tokens: int


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(size, 1))] or [""]


def block_events(index: int, block: dict[str, Any], size: int) -> list[bytes]:
    """The start/delta/stop events that build one content block."""
    if block["type"] == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], size)]
    elif block["type"] == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        raw = json.dumps(block.get("input", {}))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(raw, size)]
    elif block["type"] == "thinking":
        # The API streams the thought, then its signature in one signature_delta.
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p}
                  for p in pieces(block["thinking"], size)]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "sig")})
    elif block["type"] == "compaction":
        # The API opens the block empty and sends the summary in one compaction_delta; the
        # SDK's accumulator replaces (not appends) content and encrypted_content from it.
        start = {k: v for k, v in block.items() if k not in ("content", "encrypted_content")}
        start["content"] = None
        deltas = [{"type": "compaction_delta", "content": block.get("content"),
                   "encrypted_content": block.get("encrypted_content")}]
    else:
        raise ValueError(f"the test server cannot stream {block['type']} blocks")
    events = [
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    events += [
        sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    ]
    events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message_json(reply: Reply, msg_id: str) -> dict[str, Any]:
    extra = {"context_management": reply.context_management} if reply.context_management else {}
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": reply.usage,
        **extra,
    }


def stream_events(reply: Reply, msg_id: str) -> list[bytes]:
    start = {
        **message_json(reply, msg_id),
        "content": [],
        "stop_reason": None,
        "usage": {k: v for k, v in reply.usage.items() if k != "iterations"} | {"output_tokens": 1},
    }
    start.pop("context_management", None)
    events = [
        sse("message_start", {"type": "message_start", "message": start}),
        sse("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(reply.content):
        events += block_events(index, block, reply.chunk)
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    # The final message_delta carries cumulative usage (iterations included) and the
    # context_management report, as BetaRawMessageDeltaEvent declares them.
    usage = {k: v for k, v in reply.usage.items() if k != "cache_creation"}
    usage.setdefault("output_tokens", 0)
    final = {"type": "message_delta", "delta": delta, "usage": usage}
    if reply.context_management:
        final["context_management"] = reply.context_management
    events.append(sse("message_delta", final))
    events.append(sse("message_stop", {"type": "message_stop"}))
    if reply.malformed_at is not None:
        events.insert(reply.malformed_at, b"event: content_block_delta\ndata: {not json\n\n")
    if reply.error_event is not None:
        failure = json.loads(reply.error_event.body())
        events = [*events[: reply.error_after], sse("error", failure)]
    return events
