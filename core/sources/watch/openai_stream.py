"""A recorded OpenAI answer back into its final object: a Response, or a chat.completion.

Like :mod:`core.sources.watch.sse` for the Messages API, this runs once the exchange is
over, on the bytes the client already has, and works on plain dicts so unknown item or
event kinds survive as they came.

* Responses API streams (``event: response.*``): the final event (``response.completed``,
  ``response.incomplete`` or ``response.failed``) carries the whole Response; its ``output``
  is filled from the ``response.output_item.done`` items when it came empty (the API may
  leave it so). A stream cut before its final event gives what had arrived: the
  ``response.created`` Response (its ``status`` still ``in_progress``) with the items done
  so far and the text, refusal, arguments and summary parts of the ones still open,
  assembled from their deltas.
* Chat Completions streams (``data: {chunk}`` … ``data: [DONE]``): one ``chat.completion``
  with each choice's message assembled from its deltas (content, a refusal, tool calls by
  index, reasoning content), the last ``finish_reason`` and the ``usage`` of the last chunk (sent
  only with ``stream_options.include_usage``).

Usage is read in OpenAI's terms, where cached input is *part of* the input count, and
mapped to the Messages-shaped ``usage`` every ctxlab view reads (:func:`messages_usage`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from core.sources.watch.sse import ServerEvent, decoded, iter_sse
from core.usage import Usage

FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def _load(event: ServerEvent) -> dict[str, Any] | None:
    try:
        data = json.loads(event.data)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


# Delta events of an open output item: (the field they add to, the index of its part).
_ITEM_DELTAS = {
    "response.output_text.delta": ("text", "content_index"),
    "response.refusal.delta": ("refusal", "content_index"),
    "response.function_call_arguments.delta": ("arguments", None),
    "response.custom_tool_call_input.delta": ("input", None),
    "response.reasoning_summary_text.delta": ("summary", "summary_index"),
}


class _Items:
    """The output items of a Responses stream by ``output_index``, with the deltas of the
    ones not done yet collected in lists (joined once: linear in the stream's length), each
    under its part (a content or summary index)."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.done: set[int] = set()
        self.parts: dict[tuple[int, str, int], list[str]] = {}

    def add(self, index: Any, item: Any, done: bool) -> None:
        if isinstance(index, int) and isinstance(item, dict):
            self.items[index] = dict(item)
            if done:
                self.done.add(index)
                for key in [k for k in self.parts if k[0] == index]:
                    del self.parts[key]

    def delta(self, data: dict[str, Any], field: str, part_key: str | None) -> None:
        index, piece = data.get("output_index"), data.get("delta")
        part = data.get(part_key, 0) if part_key else 0
        if isinstance(index, int) and index not in self.done and isinstance(piece, str) \
                and isinstance(part, int):
            self.parts.setdefault((index, field, part), []).append(piece)

    def _joined(self, index: int, fields: tuple[str, ...]) -> list[tuple[str, str]]:
        """(field, text) of each part of ``index`` in ``fields`` so far, in part order."""
        keys = sorted((k for k in self.parts if k[0] == index and k[1] in fields),
                      key=lambda k: (k[2], k[1]))
        return [(k[1], "".join(self.parts[k])) for k in keys]

    def output(self) -> list[dict[str, Any]]:
        """Every item in order; an unfinished one with what its deltas said so far (a
        message's text and refusal parts, a call's input, a reasoning summary's parts)."""
        out = []
        for index in sorted(self.items):
            item = self.items[index]
            content = [{"type": "output_text", "text": text} if field == "text"
                       else {"type": "refusal", "refusal": text}
                       for field, text in self._joined(index, ("text", "refusal")) if text]
            if content:
                item["content"] = content
            for field, joined in self._joined(index, ("arguments", "input")):
                if joined:  # a function's arguments, a custom tool's input
                    item[field] = joined
            summary = [{"type": "summary_text", "text": text}
                       for _, text in self._joined(index, ("summary",)) if text]
            if summary:  # a reasoning item's summary parts so far
                item["summary"] = summary
            out.append(item)
        return out


def assemble_responses(events: Iterable[ServerEvent]
                       ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The final Response of a Responses stream and its ``error`` event, if any."""
    response: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    items = _Items()
    final = False
    for event in events:
        data = _load(event)
        if data is None:
            continue
        kind = data.get("type", event.event)
        if kind == "error":
            error = data
        elif kind in FINAL_EVENTS or (kind in ("response.created", "response.in_progress")
                                      and not final):
            if isinstance(data.get("response"), dict):
                response, final = dict(data["response"]), kind in FINAL_EVENTS
        elif kind in ("response.output_item.added", "response.output_item.done"):
            items.add(data.get("output_index"), data.get("item"),
                      kind.endswith(".done"))
        elif kind in _ITEM_DELTAS:
            items.delta(data, *_ITEM_DELTAS[kind])
    if response is not None and not response.get("output"):
        response["output"] = items.output()
    return response, error


def _merge_tool_call(calls: dict[int, dict[str, Any]], delta: Any) -> None:
    if not isinstance(delta, dict):
        return
    index = delta.get("index", len(calls))
    if not isinstance(index, int):
        return
    call = calls.setdefault(index, {"id": None, "type": "function",
                                    "function": {"name": "", "arguments": ""}})
    for key in ("id", "type"):
        if delta.get(key):
            call[key] = delta[key]
    function = delta.get("function")
    if isinstance(function, dict):
        for key in ("name", "arguments"):
            if isinstance(function.get(key), str):
                call["function"][key] += function[key]


def _choice(state: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": state["role"],
                               "content": "".join(state["content"]) or None}
    if state["refusal"]:
        message["refusal"] = "".join(state["refusal"])
    if state["reasoning"]:
        message["reasoning_content"] = "".join(state["reasoning"])
    if state["tool_calls"]:
        message["tool_calls"] = [state["tool_calls"][i] for i in sorted(state["tool_calls"])]
    return {"index": state["index"], "message": message,
            "finish_reason": state["finish_reason"]}


_HEAD = ("id", "model", "created", "system_fingerprint")


def _fill_head(head: dict[str, Any] | None, chunk: dict[str, Any]) -> dict[str, Any]:
    """The completion's id, model, creation time and fingerprint: each from the first chunk
    that gives it. Azure opens a stream with a chunk of its own (``prompt_filter_results``,
    no choices) whose id and model are empty and ``created`` 0."""
    head = head if head is not None else dict.fromkeys(_HEAD)
    for key in _HEAD:
        if not head[key] and chunk.get(key):
            head[key] = chunk[key]
    return head


def assemble_chat(events: Iterable[ServerEvent]
                  ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The ``chat.completion`` of a Chat Completions stream, and an ``error`` chunk if any."""
    head: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    choices: dict[int, dict[str, Any]] = {}
    usage: Any = None
    for event in events:
        if event.data.strip() == "[DONE]":
            break
        data = _load(event)
        if data is None:
            continue
        if isinstance(data.get("error"), dict):
            error = data
            continue
        head = _fill_head(head, data)
        if data.get("usage"):
            usage = data["usage"]
        for given in data.get("choices") or []:
            if not isinstance(given, dict) or not isinstance(given.get("index", 0), int):
                continue
            state = choices.setdefault(given.get("index", 0), {
                "index": given.get("index", 0), "role": "assistant", "content": [],
                "refusal": [], "reasoning": [], "tool_calls": {}, "finish_reason": None})
            delta: dict[str, Any] = given["delta"] if isinstance(given.get("delta"), dict) \
                else {}
            if isinstance(delta.get("role"), str):
                state["role"] = delta["role"]
            for key, into in (("content", "content"), ("refusal", "refusal"),
                              ("reasoning_content", "reasoning")):
                if isinstance(delta.get(key), str):
                    state[into].append(delta[key])
            for call in delta.get("tool_calls") or []:
                _merge_tool_call(state["tool_calls"], call)
            if given.get("finish_reason"):
                state["finish_reason"] = given["finish_reason"]
    if head is None:
        return None, error
    completion = {**head, "object": "chat.completion",
                  "choices": [_choice(choices[i]) for i in sorted(choices)]}
    if usage is not None:
        completion["usage"] = usage
    return completion, error


def _count(data: Any, key: str) -> int | None:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def messages_usage(usage: Any) -> dict[str, Any] | None:
    """An OpenAI ``usage`` (Responses: ``input_tokens``, ``input_tokens_details``,
    ``output_tokens``, ``output_tokens_details``; Chat Completions: ``prompt_tokens``,
    ``completion_tokens`` and their ``_details``) in the Messages API's terms: uncached
    ``input_tokens``, ``cache_read_input_tokens``, ``output_tokens`` — read as
    :meth:`core.usage.Usage.from_codex` reads Codex's counts — plus
    ``reasoning_output_tokens`` (part of the output) and the API's ``total_tokens``."""
    if not isinstance(usage, dict):
        return None
    chat = "prompt_tokens" in usage
    given = _count(usage, "prompt_tokens" if chat else "input_tokens")
    if given is None:
        return None
    details = usage.get("prompt_tokens_details" if chat else "input_tokens_details")
    out_details = usage.get("completion_tokens_details" if chat else "output_tokens_details")
    output = _count(usage, "completion_tokens" if chat else "output_tokens") or 0
    read = Usage.from_codex({"input_tokens": given, "output_tokens": output,
                             "cached_input_tokens": _count(details, "cached_tokens") or 0})
    assert read is not None  # the input count is there
    mapped: dict[str, Any] = {"input_tokens": read.input,
                              "cache_read_input_tokens": read.cache_read,
                              "cache_creation_input_tokens": 0, "output_tokens": read.output}
    reasoning = _count(out_details, "reasoning_tokens")
    if reasoning is not None:
        mapped["reasoning_output_tokens"] = reasoning
    total = _count(usage, "total_tokens")
    if total is not None:
        mapped["total_tokens"] = total
    return mapped


def final_facts(api: str, body: dict[str, Any] | None
                ) -> tuple[str | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(stop reason, Messages-shaped usage, usage as the API sent it) of a final object.

    The stop reason of a Response is its ``status`` (``incomplete`` with its
    ``incomplete_details.reason`` after a colon); of a chat.completion, the first choice's
    ``finish_reason``; an error body has none."""
    if not isinstance(body, dict) or (isinstance(body.get("error"), dict)
                                      and not body.get("output") and not body.get("choices")):
        return None, None, None
    sent = body.get("usage") if isinstance(body.get("usage"), dict) else None
    if api == "chat.completions":
        choices = body.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        stop = first.get("finish_reason") if isinstance(first, dict) else None
    else:
        stop = body.get("status") if isinstance(body.get("status"), str) else None
        reason = body.get("incomplete_details")
        if stop == "incomplete" and isinstance(reason, dict) and reason.get("reason"):
            stop = f"incomplete: {reason['reason']}"
    return stop if isinstance(stop, str) else None, messages_usage(sent), sent


def read_openai_response(raw: bytes, content_type: str | None, encoding: str | None,
                         api: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """The final Response or chat.completion (or error body) of an OpenAI answer, a
    stream's error (an ``error`` event, or a failed Response's ``error``), and whether
    decompression stopped at :data:`~core.sources.watch.sse.DECODED_LIMIT`;
    :class:`~core.sources.watch.sse.UnreadableBody` when the body cannot be decoded."""
    body, cut = decoded(raw, encoding)
    text = body.decode("utf-8", errors="replace")
    del body
    if "text/event-stream" in (content_type or ""):
        assemble = assemble_chat if api == "chat.completions" else assemble_responses
        final, error = assemble(iter_sse(text))
        if error is None and isinstance(final, dict) and isinstance(final.get("error"), dict):
            error = {"error": final["error"]}
        return final, error, cut
    try:
        value = json.loads(text) if text.strip() else None
    except ValueError:
        return None, None, cut
    if not isinstance(value, dict):
        return None, None, cut
    return value, (value if isinstance(value.get("error"), dict) else None), cut


def is_whole(api: str, final: dict[str, Any] | None) -> bool:
    """Did the answer end as the API ends one (a Response's final status, every chat
    choice's ``finish_reason``)? Codex hangs up as soon as ``response.completed`` arrives:
    a client that leaves after that had its whole answer."""
    if not isinstance(final, dict):
        return False
    if api == "chat.completions":
        choices = final.get("choices")
        return isinstance(choices, list) and bool(choices) and all(
            isinstance(c, dict) and c.get("finish_reason") for c in choices)
    return final.get("status") in ("completed", "incomplete", "failed")


_USAGE_OBJECT = re.compile(r'"usage"\s*:\s*(?=\{)')


def usage_in_tail(tail: bytes) -> dict[str, Any] | None:
    """The last ``"usage": {…}`` object in the end of a stream the watch could not keep
    whole. A Response's final event repeats the whole output, so past the watch's reading
    budget it is cut with the rest; its ``usage`` comes last and is still in the tail.

    Only an object right after the colon counts, and only one that holds an input count: a
    ``"usage": null`` (an in-progress Response's) is no usage, and the next ``{`` after it
    belongs to another event."""
    text = tail.decode("utf-8", errors="replace")
    for found in reversed(list(_USAGE_OBJECT.finditer(text))):
        try:
            value, _ = json.JSONDecoder().raw_decode(text, found.end())
        except ValueError:
            continue
        if isinstance(value, dict) and ("input_tokens" in value or "prompt_tokens" in value):
            return value
    return None
