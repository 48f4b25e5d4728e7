"""What one OpenAI request holds: its history, instructions, purpose and breakdown.

The Responses API sends the history as ``input`` (a string, or a flat list of items:
``message``, ``function_call``, ``function_call_output``, ``reasoning``, ``compaction``…)
and the system prompt as ``instructions`` or as leading ``developer``/``system``
messages (Codex sends no ``instructions``: its prompt is the first developer message).
Chat Completions sends ``messages`` with ``system``/``developer``/``tool`` roles and tool
calls inside assistant messages. Both are measured here in the project's category
vocabulary (:mod:`core.compact.breakdown`), so a Codex request reads like a Claude Code
one: instructions messages are ``system_messages``, tool calls (``function_call``,
``custom_tool_call``, ``local_shell_call``…) ``tool_calls``, their outputs
``tool_results``, reasoning items — encrypted content and all — ``thinking``, images
``images``, and a compaction item ``summaries``. The parts of each item add up to its JSON
length, as a Messages request's do.

Codex says more about a request than its body does, in the ``x-codex-turn-metadata``
header (no secret: ids, the window number, ``request_kind`` and, on a compaction,
``compaction.trigger``): that is the client's own word, and wins over any guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.compact.breakdown import MESSAGE_CATEGORIES
from core.measure import json_chars

INSTRUCTION_ROLES = ("system", "developer")
# Codex's local compaction: the summary request's last user message, and the message the
# next request carries the summary in.
CHECKPOINT_PROMPT = "you are performing a context checkpoint compaction"
CODEX_SUMMARY_PREFIX = "another language model started to solve this problem"
TOOL_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call",
                        "web_search_call", "file_search_call", "computer_call",
                        "code_interpreter_call", "image_generation_call", "mcp_call",
                        "tool_search_call"})
TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output",
                          "local_shell_call_output", "computer_call_output",
                          "tool_search_output"})
IMAGE_PARTS = frozenset({"input_image", "input_file", "image_url", "input_audio", "file"})
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "refusal", "summary_text"})


def history(body: dict[str, Any]) -> list[Any]:
    """The request's history as a list: ``messages`` (Chat Completions), ``input`` (a list
    of items, or a string standing for one user message) or nothing."""
    if isinstance(body.get("messages"), list):
        return list(body["messages"])
    given = body.get("input")
    if isinstance(given, list):
        return list(given)
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    return []


def item_type(item: Any) -> str:
    """An item's kind: its ``type``, or ``message`` for a role-only item or chat message."""
    if not isinstance(item, dict):
        return ""
    kind = item.get("type")
    return kind if isinstance(kind, str) else ("message" if "role" in item else "")


def content_text(content: Any) -> str:
    """The readable text of a message content (a string, or text parts)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(p["text"] for p in content
                     if isinstance(p, dict) and isinstance(p.get("text"), str))


def is_instructions(item: Any) -> bool:
    return item_type(item) == "message" and item.get("role") in INSTRUCTION_ROLES


def instructions_text(body: dict[str, Any]) -> str:
    """The system prompt: ``instructions``, else the leading system/developer messages."""
    given = body.get("instructions")
    if isinstance(given, str) and given:
        return given
    lead = []
    for item in history(body):
        if not is_instructions(item):
            break
        lead.append(content_text(item.get("content")))
    return "\n".join(lead)


def last_user_text(items: list[Any]) -> str:
    user = next((m for m in reversed(items)
                 if item_type(m) == "message" and m.get("role") == "user"), None)
    return content_text(user.get("content")) if user is not None else ""


def is_checkpoint_request(body: dict[str, Any]) -> bool:
    """Codex's local compaction: its summary request (no tools, the checkpoint prompt as
    the last user message)."""
    return body.get("tools") == [] and \
        last_user_text(history(body)).lstrip().lower().startswith(CHECKPOINT_PROMPT)


def is_compaction_trigger(body: dict[str, Any]) -> bool:
    """Codex's remote compaction: the history with a ``compaction_trigger`` item."""
    return any(item_type(i) == "compaction_trigger" for i in history(body))


def turn_metadata(value: str | None) -> dict[str, Any]:
    """The ``x-codex-turn-metadata`` header as a dict (empty when absent or unreadable)."""
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def window_number(window_id: str | None) -> int | None:
    """The ``n`` of Codex's ``x-codex-window-id: <thread>:<n>`` (None when absent or odd)."""
    if not window_id or ":" not in window_id:
        return None
    tail = window_id.rpartition(":")[2]
    return int(tail) if tail.isdigit() and len(tail) < 10 else None


def compaction_trigger(metadata: dict[str, Any]) -> str | None:
    """``compaction.trigger`` (``manual``/``auto``) of a compaction's turn metadata."""
    compaction = metadata.get("compaction")
    trigger = compaction.get("trigger") if isinstance(compaction, dict) else None
    return trigger if isinstance(trigger, str) else None


def guess_purpose(api: str, body: dict[str, Any], metadata: dict[str, Any]) -> str:
    """``main`` (a turn), ``summary`` (a request for the summary a client compacts with),
    ``compaction`` (a server-side compaction: ``/responses/compact`` or Codex's
    ``compaction_trigger``), ``prewarm``, ``title``, ``side`` or ``other``.

    Codex's ``request_kind`` is used when it says: its compaction request is a ``summary``
    when it asks the model for one locally and a ``compaction`` otherwise."""
    kind = metadata.get("request_kind")
    if api == "responses.compact" or is_compaction_trigger(body):
        return "compaction"
    if is_checkpoint_request(body):
        return "summary"
    if kind == "compaction":
        return "compaction"
    if kind == "prewarm":
        return "prewarm"
    if kind == "turn" or body.get("tools"):
        return "main"
    items = [i for i in history(body) if not is_instructions(i)]
    probe = (instructions_text(body) + " " + last_user_text(items)).lower()
    if len(items) <= 2 and "title" in probe:
        return "title"
    if len(items) <= 2 and "summar" in probe:
        return "summary"
    return "main" if len(items) > 2 else "side"


# -- the breakdown ------------------------------------------------------------------------


def _parts(content: Any, sizes: dict[str, int], text_key: str = "text") -> None:
    if isinstance(content, str):
        sizes[text_key] += json_chars(content)
    elif isinstance(content, list):
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in IMAGE_PARTS:
                sizes["images"] += json_chars(part)
            elif kind in TEXT_PARTS and isinstance(part.get("text"), str):
                sizes[text_key] += json_chars(part["text"])


def _message(item: dict[str, Any], sizes: dict[str, int]) -> None:
    role = item.get("role")
    if role in INSTRUCTION_ROLES:
        sizes["system_messages"] += json_chars(item.get("content")) if "content" in item else 0
        return
    if role == "tool":  # Chat Completions' tool output
        _parts(item.get("content"), sizes, "tool_results")
        return
    content = item.get("content")
    if content_text(content).lstrip().lower().startswith(CODEX_SUMMARY_PREFIX):
        sizes["summaries"] += json_chars(content)
    else:
        _parts(content, sizes)
    if "tool_calls" in item:
        sizes["tool_calls"] += json_chars(item["tool_calls"])
    for key in ("reasoning_content", "reasoning"):
        if key in item:
            sizes["thinking"] += json_chars(item[key])


def item_breakdown(item: Any) -> dict[str, int]:
    """One item's (or chat message's) JSON length split by category; the parts add up to it."""
    sizes = dict.fromkeys(MESSAGE_CATEGORIES, 0)
    kind = item_type(item)
    if kind == "message":
        _message(item, sizes)
    elif kind in TOOL_CALLS:
        sizes["tool_calls"] += json_chars(item)
    elif kind in TOOL_OUTPUTS:
        _parts(item.get("output"), sizes, "tool_results")
    elif kind == "reasoning":
        sizes["thinking"] += json_chars(item)
    elif kind == "compaction":
        sizes["summaries"] += json_chars(item)
    elif isinstance(item, dict):
        sizes["text"] += json_chars(item)
    sizes["structure"] = json_chars(item) - sum(sizes.values())
    return sizes


def encrypted_chars(items: list[Any]) -> int:
    """Characters of encrypted content (reasoning and compaction items): context the
    client cannot read but sends every time."""
    return sum(len(i["encrypted_content"]) for i in items
               if isinstance(i, dict) and isinstance(i.get("encrypted_content"), str))


@dataclass(frozen=True)
class Measure:
    items: int
    chars: int
    breakdown: dict[str, int]
    sent_text: str  # instructions, tools and history as sent, for the token estimate
    encrypted: int  # chars of encrypted content in the history (:func:`encrypted_chars`)


def measure(body: dict[str, Any]) -> Measure:
    """The history's size by category, plus the request-level ``system`` (``instructions``)
    and ``tools``, in the breakdown's vocabulary."""
    items = history(body)
    totals = dict.fromkeys(MESSAGE_CATEGORIES, 0)
    for item in items:
        for key, value in item_breakdown(item).items():
            totals[key] += value
    chars = json_chars(items)
    totals["structure"] += chars - sum(totals.values())  # the list's own brackets, commas
    instructions = body.get("instructions")
    tools = body.get("tools")
    breakdown = {"system": json_chars(instructions) if isinstance(instructions, str) else 0,
                 "tools": json_chars(tools) if tools else 0, **totals}
    sent = "".join((instructions if isinstance(instructions, str) else "",
                    json.dumps(tools, ensure_ascii=False) if tools else "",
                    json.dumps(items, ensure_ascii=False)))
    return Measure(items=len(items), chars=chars, breakdown=breakdown, sent_text=sent,
                   encrypted=encrypted_chars(items))
