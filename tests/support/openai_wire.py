"""What the scripted OpenAI server sends: queued replies and their wire format.

Responses streams follow the real API event by event (``response.created``,
``response.in_progress``, then per output item ``response.output_item.added``, its deltas —
``response.output_text.delta`` inside a content part, ``response.function_call_arguments.delta``,
``response.custom_tool_call_input.delta``, ``response.reasoning_summary_text.delta`` — and
``response.output_item.done``, then ``response.completed`` carrying the whole response and its
``usage``), each event numbered by ``sequence_number``, because real clients (the Codex CLI,
the ``openai`` SDK) assemble their answer from exactly these. Chat Completions streams are
``chat.completion.chunk`` objects ending in ``data: [DONE]``, with a last usage-only chunk
when the request asks for ``stream_options.include_usage``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

DEFAULT_USAGE = {"input_tokens": 1200, "output_tokens": 40}


def responses_usage(input_tokens: int, output_tokens: int, *, cached: int = 0,
                    reasoning: int = 0) -> dict[str, Any]:
    """``usage`` as the Responses API reports it (cached and reasoning counted inside)."""
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input_tokens + output_tokens}


def chat_usage(prompt: int, completion: int, *, cached: int = 0,
               reasoning: int = 0) -> dict[str, Any]:
    """``usage`` as Chat Completions reports it."""
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0}}


# -- output items ---------------------------------------------------------------------------

def message_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [],
                         "logprobs": []}]}


def function_call_item(name: str, arguments: dict[str, Any] | str, call_id: str
                       ) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"type": "function_call", "status": "completed", "arguments": args,
            "call_id": call_id, "name": name}


def custom_tool_call_item(name: str, input: str, call_id: str) -> dict[str, Any]:
    return {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
            "name": name, "input": input}


def reasoning_item(summary: str, encrypted: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning",
                            "summary": [{"type": "summary_text", "text": summary}]}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def compaction_item(encrypted: str) -> dict[str, Any]:
    """What a remote compaction answers with: the history, opaque to the client."""
    return {"type": "compaction", "encrypted_content": encrypted}


# -- replies --------------------------------------------------------------------------------

@dataclass
class ResponsesReply:
    """A successful response; streamed or not, as the request asks."""

    output: list[dict[str, Any]]
    usage: dict[str, Any] = field(
        default_factory=lambda: responses_usage(DEFAULT_USAGE["input_tokens"],
                                                DEFAULT_USAGE["output_tokens"]))
    model: str | None = None  # None: the model the request named
    status: str = "completed"  # "incomplete" ends the stream with response.incomplete
    chunk: int = 8  # characters per delta
    delay: float = 0.0  # seconds before answering
    event_delay: float = 0.0  # seconds between SSE events
    cut_after: int | None = None  # stream only: events sent before the connection drops
    malformed_at: int | None = None  # stream only: a garbage event at this position
    failed: dict[str, Any] | None = None  # stream only: end with response.failed + this error


@dataclass
class ChatReply:
    """A chat completion: text and/or tool calls."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=lambda: chat_usage(1200, 40))
    model: str | None = None
    finish_reason: str | None = None  # None: "tool_calls" with tool calls, else "stop"
    chunk: int = 8
    delay: float = 0.0
    event_delay: float = 0.0
    cut_after: int | None = None


@dataclass
class CompactReply:
    """The answer of ``POST /v1/responses/compact``: the new history, as items."""

    output: list[dict[str, Any]]
    usage: dict[str, Any] = field(default_factory=lambda: responses_usage(5000, 300))


@dataclass
class OpenAIError:
    status: int
    message: str
    error_type: str = "invalid_request_error"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def body(self) -> bytes:
        return json.dumps({"error": {"message": self.message, "type": self.error_type,
                                     "param": None, "code": self.code}}).encode()


def sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), max(size, 1))] or [""]


# -- Responses ------------------------------------------------------------------------------

def _with_ids(output: list[dict[str, Any]], resp_id: str) -> list[dict[str, Any]]:
    prefixes = {"message": "msg", "function_call": "fc", "custom_tool_call": "ctc",
                "reasoning": "rs", "compaction": "cmp"}
    return [{"id": f"{prefixes.get(item['type'], 'item')}_{resp_id[5:]}_{n}", **item}
            if "id" not in item else item for n, item in enumerate(output)]


def response_json(reply: ResponsesReply, resp_id: str, model: str) -> dict[str, Any]:
    return {"id": resp_id, "object": "response", "created_at": int(time.time()),
            "status": reply.status, "error": None, "incomplete_details":
            {"reason": "max_output_tokens"} if reply.status == "incomplete" else None,
            "model": reply.model or model, "output": _with_ids(reply.output, resp_id),
            "parallel_tool_calls": True, "store": False, "usage": reply.usage}


def _item_events(index: int, item: dict[str, Any], size: int) -> list[dict[str, Any]]:
    base = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "message":
        text = "".join(p.get("text", "") for p in item["content"])
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        return [{"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "status": "in_progress", "content": []}},
                {"type": "response.content_part.added", **base, "content_index": 0,
                 "part": part},
                *({"type": "response.output_text.delta", **base, "content_index": 0,
                   "delta": piece, "logprobs": []} for piece in pieces(text, size)),
                {"type": "response.output_text.done", **base, "content_index": 0,
                 "text": text, "logprobs": []},
                {"type": "response.content_part.done", **base, "content_index": 0,
                 "part": {**part, "text": text}}]
    if kind == "function_call":
        args = item["arguments"]
        return [{"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "status": "in_progress", "arguments": ""}},
                *({"type": "response.function_call_arguments.delta", **base, "delta": piece}
                  for piece in pieces(args, size)),
                {"type": "response.function_call_arguments.done", **base, "arguments": args}]
    if kind == "custom_tool_call":
        text = item["input"]
        return [{"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "status": "in_progress", "input": ""}},
                *({"type": "response.custom_tool_call_input.delta", **base, "delta": piece}
                  for piece in pieces(text, size)),
                {"type": "response.custom_tool_call_input.done", **base, "input": text}]
    if kind == "reasoning":
        summary = "".join(p.get("text", "") for p in item.get("summary", []))
        part = {"type": "summary_text", "text": ""}
        return [{"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "summary": []}},
                {"type": "response.reasoning_summary_part.added", **base, "summary_index": 0,
                 "part": part},
                *({"type": "response.reasoning_summary_text.delta", **base,
                   "summary_index": 0, "delta": piece} for piece in pieces(summary, size)),
                {"type": "response.reasoning_summary_text.done", **base, "summary_index": 0,
                 "text": summary},
                {"type": "response.reasoning_summary_part.done", **base, "summary_index": 0,
                 "part": {**part, "text": summary}}]
    return [{"type": "response.output_item.added", "output_index": index, "item": item}]


def response_events(reply: ResponsesReply, resp_id: str, model: str) -> list[bytes]:
    """The SSE events of one streamed response, numbered as the API numbers them."""
    whole = response_json(reply, resp_id, model)
    start = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": start},
                                    {"type": "response.in_progress", "response": start}]
    for index, item in enumerate(whole["output"]):
        events += _item_events(index, item, reply.chunk)
        events.append({"type": "response.output_item.done", "output_index": index,
                       "item": item})
    if reply.failed is not None:
        events.append({"type": "response.failed", "response": {
            **whole, "status": "failed", "error": reply.failed, "usage": None}})
    else:
        end = "response.incomplete" if reply.status == "incomplete" else "response.completed"
        events.append({"type": end, "response": whole})
    raw = [sse({**event, "sequence_number": n}) for n, event in enumerate(events)]
    if reply.malformed_at is not None:
        raw.insert(reply.malformed_at, b"event: response.output_text.delta\ndata: {not json\n\n")
    return raw


# -- Chat Completions -----------------------------------------------------------------------

def _finish(reply: ChatReply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def chat_json(reply: ChatReply, chat_id: str, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content,
                               "refusal": None, "annotations": []}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {"id": chat_id, "object": "chat.completion", "created": int(time.time()),
            "model": reply.model or model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": _finish(reply)}],
            "usage": reply.usage, "service_tier": "default", "system_fingerprint": None}


def chat_chunks(reply: ChatReply, chat_id: str, model: str, *, include_usage: bool
                ) -> list[bytes]:
    """``data:`` lines of a streamed completion, ``[DONE]`` last."""
    head = {"id": chat_id, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": reply.model or model, "service_tier": "default",
            "system_fingerprint": None}
    if include_usage:
        head["usage"] = None

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                     "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chunk({"content": piece}) for piece in pieces(reply.content or "", reply.chunk)
               if reply.content]
    for index, call in enumerate(reply.tool_calls):
        fn = call["function"]
        chunks.append(chunk({"tool_calls": [{"index": index, "id": call["id"],
                                             "type": "function",
                                             "function": {"name": fn["name"],
                                                          "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in pieces(fn["arguments"], reply.chunk)]
    chunks.append(chunk({}, _finish(reply)))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": reply.usage})
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """One ``tool_calls`` entry of a chat completion."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
