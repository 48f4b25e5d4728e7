"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

Every line is ``{"timestamp", "type", "payload"}``. The conversation is the sequence of
``response_item`` payloads — the Responses API's items, which the agent sends back as its
next request's input — and ``event_msg``/``token_count`` follows each model response with
that call's usage, which marks where one request ends. Function calls and their outputs
become Anthropic-shaped ``tool_use``/``tool_result`` blocks, reasoning becomes a
``thinking`` block (its encrypted content, which is sent back too, as the signature).

Read: ``session_meta.payload.instructions`` (system text), ``turn_context.payload.model``,
``response_item`` of type ``message`` (``user``/``assistant``; ``developer`` goes to the
system text), ``reasoning`` (``summary``, ``content``, ``encrypted_content``),
``function_call``/``custom_tool_call``/``local_shell_call`` (``call_id``, ``name``,
``arguments``/``input``/``action``), ``function_call_output``/``custom_tool_call_output``
(``call_id``, ``output``), ``event_msg``/``token_count`` (``info.last_token_usage``: its
input, cached, cache-write, output and reasoning counts), ``compacted`` (``message``).
Ignored: ``session_meta`` ids, cwd, git and version fields, ``turn_context``'s policies,
``rate_limits``, item ``id``s. Skipped and counted: other ``event_msg`` kinds (they repeat
the items as UI events), ``web_search_call`` and other item types, unknown line types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.sources.replay.model import Compaction, Recording
from core.sources.replay.reading import jsonl_objects, skip
from core.sources.replay.shape import text_or_none, usage_problem
from core.sources.replay.steps import StepBuilder
from core.usage import Usage, context_tokens

AGENT = Manager.CODEX
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                        "compacted"})


def looks_like(first: Any) -> bool:
    return isinstance(first, dict) and isinstance(first.get("type"), str) and \
        first["type"] in LINE_TYPES and "payload" in first


def usage_of(info: Any) -> dict[str, Any] | None:
    """``last_token_usage`` in the Messages API's terms (:meth:`Usage.from_codex`: OpenAI
    counts cached input and cache writes inside ``input_tokens``; Anthropic apart)."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return None
    problem = usage_problem(last, "info.last_token_usage")
    if problem:
        raise BadLine(problem)
    usage = Usage.from_codex(last) or Usage()
    reasoning = last.get("reasoning_output_tokens")
    return {**usage.to_api(),
            "reasoning_output_tokens": reasoning if isinstance(reasoning, int) else 0}


class BadLine(ValueError):
    """A line with a field of the wrong type: it is skipped with this reason."""


def _text(parts: Any, *kinds: str) -> str:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    found = [p for p in parts if isinstance(p, dict) and p.get("type") in kinds
             and p.get("text")]
    for part in found:
        if not isinstance(part["text"], str):
            raise BadLine(f"a {part['type']} part's text is a {type(part['text']).__name__}, "
                          "not text")
    return "\n".join(part["text"] for part in found)


def _image(part: dict[str, Any]) -> dict[str, Any]:
    url = str(part.get("image_url") or "")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media,
                                            "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "input_image":
            blocks.append(_image(part))
        elif isinstance(part.get("text"), str) and part["text"]:
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("text"):
            raise BadLine(f"a user part's text is a {type(part['text']).__name__}, not text")
    return blocks


def _arguments(raw: Any, key: str = "arguments") -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {key: raw}


def _output(raw: Any) -> Any:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("content"), str):
        return raw["content"]
    return json.dumps(raw, ensure_ascii=False)


def load(path: Path, text: str) -> Recording:
    recording = Recording(format="codex", path=path, agent=AGENT)
    steps = StepBuilder(recording)
    system: list[str] = []
    model: str | None = None
    last_usage: dict[str, Any] | None = None
    for line in jsonl_objects(text, recording):
        kind, payload = line.data.get("type"), line.data.get("payload")
        kind = kind if isinstance(kind, str) else repr(kind)
        payload = payload if isinstance(payload, dict) else {}
        stamp = text_or_none(line.data.get("timestamp"))
        try:
            last_usage = _line(kind, payload, steps, recording, system, model, line.number,
                               stamp, last_usage)
        except BadLine as exc:
            skip(recording, line.number, f"line {line.number}: {exc}; skipped")
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
    steps.finish()
    recording.system = "\n\n".join(system)
    recording.model = recording.model or model
    return recording


def _line(kind: str, payload: dict[str, Any], steps: StepBuilder, recording: Recording,
          system: list[str], model: str | None, number: int, stamp: str | None,
          last_usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """One line into the steps; the last usage seen comes back (a compaction's size).
    A field of the wrong type raises :class:`BadLine` before anything is added."""
    if kind == "session_meta":
        if isinstance(payload.get("instructions"), str):
            system.append(payload["instructions"])
    elif kind == "turn_context":
        pass  # the model, read by the caller
    elif kind == "event_msg" and payload.get("type") == "token_count":
        usage = usage_of(payload.get("info"))
        last_usage = usage or last_usage
        steps.close_reply(usage)
    elif kind == "event_msg":
        recording.skipped[f"event_msg:{payload.get('type')}"] += 1
    elif kind == "compacted":
        summary = payload.get("message") or ""
        if not isinstance(summary, str):
            raise BadLine(f"the compacted message is a {type(summary).__name__}, not text")
        pre = context_tokens(last_usage)
        steps.compaction(Compaction(
            by=AGENT, trigger="auto", summary=summary, pre_tokens=pre,
            kept=[{"role": "user", "content": summary}] if summary else [],
            line=number, timestamp=stamp))
    elif kind == "response_item":
        _item(payload, steps, recording, system, model, number, stamp)
    else:
        recording.skipped[f"unknown type {kind!r}"] += 1
    return last_usage


def _item(item: dict[str, Any], steps: StepBuilder, recording: Recording, system: list[str],
          model: str | None, number: int, stamp: Any) -> None:
    kind = item.get("type") if isinstance(item.get("type"), str) else None
    reply = lambda blocks: steps.assistant(blocks, model=model, line=number,  # noqa: E731
                                           timestamp=stamp)
    if kind == "message" and item.get("role") == "developer":
        system.append(_text(item.get("content"), "input_text"))
    elif kind == "message" and item.get("role") == "user":
        steps.user(_user_blocks(item.get("content")))
    elif kind == "message" and item.get("role") == "assistant":
        reply([{"type": "text", "text": _text(item.get("content"), "output_text")}])
    elif kind == "reasoning":
        thought = _text(item.get("summary"), "summary_text") or \
            _text(item.get("content"), "reasoning_text", "text")
        reply([{"type": "thinking", "thinking": thought,
                "signature": str(item.get("encrypted_content") or "")}])
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        raw = item.get("arguments", item.get("input", item.get("action")))
        name = item.get("name") or ("local_shell" if kind == "local_shell_call" else "tool")
        if not isinstance(name, str):
            raise BadLine(f"the call's name is a {type(name).__name__}, not text")
        use_id = str(item.get("call_id") or item.get("id") or f"call_line_{number}")
        key = "input" if kind == "custom_tool_call" else "arguments"
        reply([{"type": "tool_use", "id": use_id, "name": name,
                "input": _arguments(raw, key)}])
    elif kind in ("function_call_output", "custom_tool_call_output"):
        steps.user([{"type": "tool_result", "tool_use_id": str(item.get("call_id") or ""),
                     "content": _output(item.get("output"))}])
    else:
        recording.skipped[f"response_item:{kind}"] += 1
