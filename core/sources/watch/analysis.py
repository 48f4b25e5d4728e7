"""What one watched request holds: model, purpose guess, size and category breakdown.

Pure functions on the request body as the client sent it (a parsed JSON object), so the
same numbers come out of a live proxy, a recording and a test. ``chars`` is the project's
measure (``json_chars`` of the message list, core/measure.py); the system prompt and tool
definitions are sent too and appear in the breakdown, as in the live workbench.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.measure import estimate_tokens, json_chars
from core.messages import system_text as messages_system_text

# The breakdown's categories, in display order. "messages" is conversation text plus the
# JSON structure around it, so the message categories add up to ``chars`` exactly.
CATEGORIES = ("system", "tool definitions", "messages", "tool calls", "tool results",
              "thinking", "images")
# Words of the system prompt or the only message that mark a side call (Claude Code asks
# for a short title of the session and whether a message starts a new topic).
TITLE_WORDS = ("title", "new conversation topic", "summarize this coding conversation")


@dataclass(frozen=True)
class RequestFacts:
    model: str | None
    purpose: str
    stream: bool
    messages: int
    chars: int
    est_tokens: int
    categories: dict[str, int] = field(default_factory=dict)


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a request body as text."""
    return messages_system_text(body.get("system"))


def _first_text(messages: list[Any]) -> str:
    if not messages or not isinstance(messages[0], dict):
        return ""
    content = messages[0].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def guess_purpose(path: str, body: dict[str, Any]) -> str:
    """``main``, ``title``, ``summary``, ``quota``, ``side``, ``count_tokens`` or ``other``.

    A guess, and said to be one.

    Claude Code sends ``max_tokens: 1`` probes (quota and usage checks), short tool-less
    calls for titles and topics, and its conversation with the tool definitions. Any call
    with tools is taken as the main conversation; a tool-less call with a long history too.
    """
    if path.rstrip("/").endswith("/count_tokens"):
        return "count_tokens"
    if not path.rstrip("/").endswith("/v1/messages"):
        return "other"
    messages = given if isinstance(given := body.get("messages"), list) else []
    if body.get("max_tokens") == 1:
        return "quota"
    if body.get("tools"):
        return "main"
    probe = (system_text(body) + " " + _first_text(messages)).lower()
    if len(messages) <= 2 and any(word in probe for word in TITLE_WORDS):
        return "title"
    if len(messages) <= 2 and "summarize" in probe:
        return "summary"
    return "main" if len(messages) > 2 else "side"


def _block_categories(block: dict[str, Any], sizes: dict[str, int]) -> None:
    kind = block.get("type")
    if kind == "tool_use" or kind == "server_tool_use":
        sizes["tool calls"] += json_chars(block)
    elif kind == "tool_result" or str(kind).endswith("_tool_result"):
        sizes["tool results"] += json_chars(block)
    elif kind in ("thinking", "redacted_thinking"):
        sizes["thinking"] += json_chars(block)
    elif kind in ("image", "document"):
        sizes["images"] += json_chars(block)


def message_categories(messages: list[Any]) -> dict[str, int]:
    """The message list's chars split by what they carry; the parts add up to the whole."""
    sizes = dict.fromkeys(CATEGORIES[2:], 0)
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    _block_categories(block, sizes)
    sizes["messages"] = json_chars(messages) - sum(sizes.values())
    return sizes


def analyse_request(path: str, body: dict[str, Any]) -> RequestFacts:
    """Measure one request body. Runs off the event loop: a body can be tens of MB."""
    messages = given if isinstance(given := body.get("messages"), list) else []
    categories = {
        "system": json_chars(body["system"]) if "system" in body else 0,
        "tool definitions": json_chars(body["tools"]) if "tools" in body else 0,
        **message_categories(messages),
    }
    chars = json_chars(messages)
    tools = body.get("tools")
    sent = "".join((system_text(body), _dumps(tools) if tools else "", _dumps(messages)))
    model = body.get("model")
    return RequestFacts(
        model=model if isinstance(model, str) else None,
        purpose=guess_purpose(path, body),
        stream=bool(body.get("stream")),
        messages=len(messages),
        chars=chars,
        est_tokens=estimate_tokens(sent),
        categories=categories,
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def response_facts(message: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """The stop reason and the real ``usage`` of a final Message (``None`` for an error)."""
    if not isinstance(message, dict) or message.get("type") == "error":
        return None, None
    usage = message.get("usage")
    return message.get("stop_reason"), usage if isinstance(usage, dict) else None
