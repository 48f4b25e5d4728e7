"""OpenAI Responses API items as the project's messages: one conversion for every reader.

A Codex rollout writes the items Codex sends back as its next request's ``input``, and a
watch recording of any Responses API client holds that ``input`` itself, so both read items
through :func:`item_blocks` and a request or a rollout line means the same history.

An item becomes Anthropic-shaped blocks under a role: ``message`` items keep their role
(``developer`` and ``system`` are system text, not history); ``reasoning`` is a
``thinking`` block whose signature is the encrypted content (it is sent back, so it
counts, in the ``thinking`` category); function, custom-tool and local-shell calls become
``tool_use`` and their outputs ``tool_result``; a ``compaction`` item (the server's
encrypted summary, sent back as the last input item after a remote compaction) stays a
``compaction`` block, counted with the summaries. Anything else (``web_search_call``,
``compaction_trigger``, item references) has no place in the history and is named so a
reader can count it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.sources.replay.model import Message

SYSTEM_ROLES = ("developer", "system")
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


class BadItem(ValueError):
    """An item with a field of the wrong type: the line holding it is skipped with this."""


@dataclass(frozen=True)
class ItemBlocks:
    """One item as the history holds it: ``role`` is ``system``, ``user`` or
    ``assistant``; ``system`` blocks are text for the system prompt."""

    role: str
    blocks: list[dict[str, Any]]


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def part_text(parts: Any, *kinds: str) -> str:
    """The text of ``parts`` of the given kinds (a string is its own text)."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    found = [p for p in parts if isinstance(p, dict) and p.get("type") in kinds
             and p.get("text")]
    for part in found:
        if not isinstance(part["text"], str):
            raise BadItem(f"a {part['type']} part's text is a {_type_name(part['text'])}, "
                          "not text")
    return "\n".join(part["text"] for part in found)


def _image(part: dict[str, Any]) -> dict[str, Any]:
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url  # Chat Completions nests it
    url = str(url or "")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media,
                                            "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content parts as blocks: text parts (``input_text``, ``output_text``,
    ``text``) as text, images as image blocks, a refusal as its text."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_image", "image_url"):
            blocks.append(_image(part))
            continue
        text = part.get("text", part.get("refusal"))
        if isinstance(text, str) and text:
            blocks.append({"type": "text", "text": text})
        elif text:
            raise BadItem(f"a {part.get('type')} part's text is a {_type_name(text)}, "
                          "not text")
    return blocks


def arguments(raw: Any, key: str = "arguments") -> dict[str, Any]:
    """A call's arguments as an object: JSON text parsed, anything else kept under ``key``."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {key: raw}


def output_text(raw: Any) -> Any:
    """A tool output as a tool result's content (a string, or the JSON of anything else)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("content"), str):
        return raw["content"]
    if isinstance(raw, list):  # content parts (an image a tool returned)
        return content_blocks(raw) or json.dumps(raw, ensure_ascii=False)
    return json.dumps(raw, ensure_ascii=False)


def _call(item: dict[str, Any], kind: str, fallback_id: str) -> dict[str, Any]:
    raw = item.get("arguments", item.get("input", item.get("action")))
    name = item.get("name") or ("local_shell" if kind == "local_shell_call" else "tool")
    if not isinstance(name, str):
        raise BadItem(f"the call's name is a {_type_name(name)}, not text")
    use_id = str(item.get("call_id") or item.get("id") or fallback_id)
    key = "input" if kind == "custom_tool_call" else "arguments"
    return {"type": "tool_use", "id": use_id, "name": name, "input": arguments(raw, key)}


def item_blocks(item: dict[str, Any], fallback_id: str = "call") -> ItemBlocks | None:
    """``item`` as blocks under a role, or None when it has no place in the history.
    ``fallback_id`` names a call that carries no id of its own."""
    kind = item.get("type", "message" if "role" in item else None)
    role = item.get("role")
    if kind == "message" and role in SYSTEM_ROLES:
        return ItemBlocks("system", [{"type": "text", "text": part_text(
            item.get("content"), "input_text", "text")}])
    if kind == "message" and role in ("user", "assistant"):
        return ItemBlocks(role, content_blocks(item.get("content")))
    if kind == "reasoning":
        thought = part_text(item.get("summary"), "summary_text") or \
            part_text(item.get("content"), "reasoning_text", "text")
        return ItemBlocks("assistant", [{"type": "thinking", "thinking": thought,
                                         "signature": str(item.get("encrypted_content")
                                                          or "")}])
    if kind in CALLS:
        return ItemBlocks("assistant", [_call(item, kind, fallback_id)])
    if kind in OUTPUTS:
        return ItemBlocks("user", [{"type": "tool_result",
                                    "tool_use_id": str(item.get("call_id") or ""),
                                    "content": output_text(item.get("output"))}])
    if kind == "compaction":
        encrypted = item.get("encrypted_content")
        return ItemBlocks("user", [{"type": "compaction", "encrypted_content":
                                    encrypted if isinstance(encrypted, str) else ""}])
    return None


def item_kind(item: Any) -> str:
    """How an item is named when it is counted as skipped."""
    kind = item.get("type") if isinstance(item, dict) else None
    return kind if isinstance(kind, str) else repr(kind)


@dataclass
class Converted:
    """A list of items as a history: the system text apart, messages alternating."""

    system: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def append_blocks(messages: list[Message], role: str, blocks: list[dict[str, Any]]) -> None:
    """Add ``blocks`` under ``role``, joining the last message when it has that role (items
    of one reply, outputs of one batch: the Messages API alternates roles)."""
    if messages and messages[-1].get("role") == role:
        last = messages[-1]
        messages[-1] = {**last, "content": list(last["content"]) + blocks}
    else:
        messages.append({"role": role, "content": list(blocks)})


def items_to_messages(items: Any) -> Converted:
    """A Responses ``input`` (a string, or a list of items) as system text and messages.
    Raises :class:`BadItem` for an item with a field of the wrong type."""
    converted = Converted()
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for index, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            converted.skipped["not an item"] += 1
            continue
        found = item_blocks(item, f"call_{index}")
        if found is None:
            converted.skipped[item_kind(item)] += 1
        elif found.role == "system":
            converted.system.append(found.blocks[0]["text"])
        else:
            append_blocks(converted.messages, found.role, found.blocks)
    return converted
