"""What one watched request holds: model, purpose guess, size and category breakdown.

Pure functions on the request body as the client sent it (a parsed JSON object), so the
same numbers come out of a live proxy, a recording and a test. ``chars`` is the project's
measure (``json_chars`` of the message list, core/measure.py); the breakdown is the one
ctxlab's own requests have (:mod:`core.compact.breakdown`): the messages by category, adding
up to ``chars``, and the system prompt and tool definitions sent besides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.compact.breakdown import BreakdownCache
from core.measure import estimate_tokens, json_chars
from core.messages import system_text as messages_system_text
from core.sources.watch.identity import is_summary_request

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
    breakdown: dict[str, int] = field(default_factory=dict)

    @property
    def categories(self) -> dict[str, int]:
        return older_categories(self.breakdown)


def older_categories(breakdown: dict[str, int]) -> dict[str, int]:
    """``watch_request.categories`` as logs before the breakdown had it, derived from the
    breakdown for scripts that read it (the last five add up to ``chars``)."""
    part = breakdown.get
    return {"system": part("system", 0), "tool definitions": part("tools", 0),
            "messages": part("text", 0) + part("system_messages", 0) + part("pointers", 0)
            + part("summaries", 0) + part("structure", 0),
            "tool calls": part("tool_calls", 0), "tool results": part("tool_results", 0),
            "thinking": part("thinking", 0), "images": part("images", 0)}


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
    calls for titles and topics, its conversation with the tool definitions, and, to
    compact, that conversation with summary instructions appended (``summary``, tools and
    all). Any other call with tools is taken as the main conversation; a tool-less call
    with a long history too.
    """
    if path.rstrip("/").endswith("/count_tokens"):
        return "count_tokens"
    if not path.rstrip("/").endswith("/v1/messages"):
        return "other"
    messages = given if isinstance(given := body.get("messages"), list) else []
    if body.get("max_tokens") == 1:
        return "quota"
    if is_summary_request(body):
        return "summary"
    if body.get("tools"):
        return "main"
    probe = (system_text(body) + " " + _first_text(messages)).lower()
    if len(messages) <= 2 and any(word in probe for word in TITLE_WORDS):
        return "title"
    if len(messages) <= 2 and "summarize" in probe:
        return "summary"
    return "main" if len(messages) > 2 else "side"


def analyse_request(path: str, body: dict[str, Any]) -> RequestFacts:
    """Measure one request body. Runs off the event loop: a body can be tens of MB."""
    messages = given if isinstance(given := body.get("messages"), list) else []
    chars = json_chars(messages)
    breakdown = {
        "system": json_chars(body["system"]) if "system" in body else 0,
        "tools": json_chars(body["tools"]) if "tools" in body else 0,
        **BreakdownCache().totals(messages),
    }
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
        breakdown=breakdown,
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def response_facts(message: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """The stop reason and the real ``usage`` of a final Message (``None`` for an error)."""
    if not isinstance(message, dict) or message.get("type") == "error":
        return None, None
    usage = message.get("usage")
    return message.get("stop_reason"), usage if isinstance(usage, dict) else None
