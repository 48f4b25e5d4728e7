"""Requests JSONL: one Messages API request body per line, optionally with its response.

This is the format ``ctxlab watch`` records, and the simplest one to write from any
harness. Each line is either

* a bare request body: ``{"model": …, "system": …, "tools": […], "messages": […], …}``, or
* ``{"request": {<request body>}, "response": {<Messages API response>}}`` — the
  response's ``content``, ``usage``, ``stop_reason`` and ``model`` are read.

Optional on either shape: ``"timestamp"`` (a string, shown as given). Each line is one
request. Its new input is whatever its ``messages`` add to the previous request's messages
(plus that request's reply, when the response was recorded). When a request does not extend
the previous one — the agent compacted or rewrote its history — the replay shows a stage
``rewrite_compact`` by the recorded agent, and ctxlab's side takes only the messages after
the last assistant message as new input.

Read: ``messages``, ``system``, ``model``; in a response ``content``, ``usage``,
``stop_reason``, ``model``. Ignored: ``tools``, ``max_tokens``, ``temperature``,
``metadata``, ``stream`` and every other key; a response's ``id`` and ``type``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.measure import json_chars
from core.messages import system_text
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.sources.replay.reading import jsonl_objects, skip
from core.sources.replay.shape import content_problem, text_or_none, usage_problem
from core.usage import context_tokens


def body_of(data: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(request, response)`` of one line, or ``(None, None)`` when it is neither shape."""
    if not isinstance(data, dict):
        return None, None
    if isinstance(data.get("request"), dict) and isinstance(data["request"].get("messages"),
                                                            list):
        response = data.get("response")
        return data["request"], response if isinstance(response, dict) else None
    if isinstance(data.get("messages"), list):
        return data, None
    return None, None


def looks_like(first: Any) -> bool:
    return body_of(first)[0] is not None


def _problem(messages: list[Message], response: dict[str, Any] | None) -> str | None:
    """Why a line cannot be replayed: a field of the wrong type in its request or response."""
    for index, message in enumerate(messages):
        problem = content_problem(message.get("content"), f"messages[{index}].content")
        if problem:
            return problem
    if response is None:
        return None
    return content_problem(response.get("content"), "response.content") or \
        usage_problem(response.get("usage"), "response.usage")


def _extends(old: list[Message], new: list[Message]) -> bool:
    """Does ``new`` start with ``old``? (First and last of ``old`` compared: O(1) per line.)"""
    if not old:
        return True
    return len(new) >= len(old) and new[0] == old[0] and new[len(old) - 1] == old[-1]


def _after_last_assistant(messages: list[Message]) -> list[Message]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            return messages[i + 1:]
    return list(messages)


def load(path: Path, text: str) -> Recording:
    recording = Recording(format="requests", path=path, agent=Manager.AGENT)
    known: list[Message] = []  # the previous request's messages (+ its reply)
    last_tokens: int | None = None
    for line in jsonl_objects(text, recording):
        request, response = body_of(line.data)
        if request is None:
            recording.note("malformed", f"line {line.number} is not a request body (no "
                           "\"messages\" array); skipped", line.number)
            recording.skipped["not a request"] += 1
            recording.lines_read -= 1
            continue
        messages = [m for m in request["messages"] if isinstance(m, dict)]
        problem = _problem(messages, response)
        if problem:
            skip(recording, line.number, f"line {line.number}: {problem}; skipped")
            recording.lines_read -= 1
            continue
        if not recording.system:
            recording.system = system_text(request.get("system"))
        if _extends(known, messages):
            new = messages[len(known):]
        else:
            new = _after_last_assistant(messages)
            recording.steps.append(Compaction(
                by=Manager.AGENT, trigger="rewrite", kept=messages[:len(messages) - len(new)],
                pre_tokens=last_tokens,
                summary=f"the request on line {line.number} does not extend the previous "
                        f"one ({json_chars(known):,} → {json_chars(messages):,} chars)",
                line=line.number))
        reply, usage = None, None
        if response is not None and isinstance(response.get("content"), list):
            reply = {"role": "assistant", "content": response["content"]}
            usage = response.get("usage") if isinstance(response.get("usage"), dict) else None
        model = text_or_none((response or {}).get("model") or request.get("model"))
        recording.model = recording.model or (model if isinstance(model, str) else None)
        stop = (response or {}).get("stop_reason")
        recording.steps.append(Exchange(input=new, reply=reply, usage=usage, model=model,
                                        stop_reason=stop if isinstance(stop, str) else None,
                                        sent=messages, line=line.number,
                                        timestamp=text_or_none(line.data.get("timestamp"))))
        known = messages + ([reply] if reply else [])
        last_tokens = context_tokens(usage) if usage else last_tokens
    return recording
