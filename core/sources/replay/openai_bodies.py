"""A recorded OpenAI call (Responses or Chat Completions) in the Messages API's shape.

A watch recording line says which API a call spoke (``"api"``: ``responses``,
``responses.compact``, ``chat.completions``; absent or ``messages`` for the Messages API).
An older line without it is told by its body: an ``input`` is the Responses API; a
``messages`` list holding a ``developer`` or ``tool`` role (or a ``system`` one without a
top-level ``system``), or a response with ``choices``, is Chat Completions.

Everything after reading works on Messages-shaped bodies, so an OpenAI call is turned into
one: the request's ``{"model", "system", "messages", "tools", "max_tokens"}`` and the
response's ``{"content", "usage", "model", "stop_reason"}``. Responses items go through
:mod:`~core.sources.replay.responses_items` (as a Codex rollout's do); Chat Completions
messages map ``system``/``developer`` to the system text, an assistant's ``tool_calls`` to
``tool_use`` blocks and a ``tool`` message to a ``tool_result``. Usage is stated in the
Messages API's terms: OpenAI counts cached input inside the input, replay apart.

Codex compacts in three ways a recording shows: a normal call whose last user message asks
for a "CONTEXT CHECKPOINT COMPACTION" (local), a call whose input ends with a
``compaction_trigger`` item (remote), and a ``responses/compact`` call. Each is the
agent's compaction call (:func:`compaction_call`), never a turn of the conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.sources.replay.codex_usage import counts
from core.sources.replay.model import Message
from core.sources.replay.responses_items import (
    BadItem,
    append_blocks,
    arguments,
    content_blocks,
    items_to_messages,
    output_text,
    part_text,
)

MESSAGES, RESPONSES, COMPACT, CHAT = ("messages", "responses", "responses.compact",
                                      "chat.completions")
APIS = (MESSAGES, RESPONSES, COMPACT, CHAT)
CHAT_ONLY_ROLES = frozenset({"developer", "tool"})
CHECKPOINT = "CONTEXT CHECKPOINT COMPACTION"
MAX_TOKEN_KEYS = ("max_output_tokens", "max_completion_tokens", "max_tokens")
CODEX_METADATA = "x-codex-turn-metadata"


@dataclass(frozen=True)
class Body:
    """One call, Messages-shaped: ``request`` and ``response`` (None when not recorded)."""

    api: str
    request: dict[str, Any]
    response: dict[str, Any] | None
    session: str | None = None  # ``prompt_cache_key``: the client's thread
    compaction: bool = False  # the agent's own compaction call
    codex: bool = False  # sent by the Codex CLI (its turn metadata is in the body)
    trigger: str | None = None  # a Codex compaction call's ``auto`` or ``manual``
    prewarm: bool = False  # Codex warming a connection: no turn of any history


def api_of(line: dict[str, Any], request: dict[str, Any], response: Any) -> str:
    """Which API a recorded call spoke: the line's ``api``, else what its body shows. A
    ``role: "system"`` message alone does not make a call Chat Completions: Claude Code
    sends one mid-history beside its top-level ``system`` and gets ``content`` back."""
    said = line.get("api")
    if isinstance(said, str) and said in APIS:
        return said
    if "input" in request and "messages" not in request:
        return RESPONSES
    if isinstance(response, dict) and ("choices" in response or
                                       isinstance(response.get("content"), list)):
        return CHAT if "choices" in response else MESSAGES
    messages = request.get("messages")
    roles = {m.get("role") for m in messages if isinstance(m, dict)
             and isinstance(m.get("role"), str)} if isinstance(messages, list) else set()
    if roles & CHAT_ONLY_ROLES or ("system" in roles and "system" not in request):
        return CHAT
    return MESSAGES


def body_problem(api: str, request: dict[str, Any]) -> str | None:
    """Why ``request`` is no body of ``api``, or None: the Messages API and Chat Completions
    need a ``messages`` array, the Responses API an ``input`` (items, or a string). A line
    can say one API while its body holds the other's field (``"api": "messages"`` over an
    ``input``, or ``"messages": null`` beside one), and nothing could be read from it."""
    field, given = ("input", request.get("input")) if api in (RESPONSES, COMPACT) \
        else ("messages", request.get("messages"))
    if isinstance(given, list) or (field == "input" and isinstance(given, str)):
        return None
    kind = "absent" if field not in request else \
        "null" if given is None else f"a {type(given).__name__}"
    needs = "items or text" if field == "input" else "an array"
    return f"\"{field}\" is {kind}, not {needs}, and the {api} API needs it"


def usage_of(usage: Any) -> dict[str, Any] | None:
    """A Responses or Chat Completions ``usage`` in the Messages API's terms."""
    if not isinstance(usage, dict):
        return None
    given = usage.get("input_tokens", usage.get("prompt_tokens"))
    details = usage.get("input_tokens_details", usage.get("prompt_tokens_details"))
    out = usage.get("output_tokens_details", usage.get("completion_tokens_details"))
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    reasoning = out.get("reasoning_tokens") if isinstance(out, dict) else None
    return counts({"input_tokens": given, "cached_input_tokens": cached or 0,
                   "output_tokens": usage.get("output_tokens",
                                              usage.get("completion_tokens", 0)),
                   "reasoning_output_tokens": reasoning or 0}, "response.usage")


def _chat_content(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = content_blocks(message.get("content"))
    calls = message.get("tool_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        raw = call.get("function")
        function: dict[str, Any] = raw if isinstance(raw, dict) else {}
        name = function.get("name") or "tool"
        if not isinstance(name, str):
            raise BadItem(f"a tool call's name is a {type(name).__name__}, not text")
        blocks.append({"type": "tool_use", "id": str(call.get("id") or f"call_{index}"),
                       "name": name, "input": arguments(function.get("arguments"))})
    return blocks


def chat_messages(messages: list[Any]) -> tuple[list[str], list[Message]]:
    """Chat Completions messages as system texts and Messages-shaped messages."""
    system: list[str] = []
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(part_text(message.get("content"), "text", "input_text"))
        elif role == "tool":
            append_blocks(out, "user", [{"type": "tool_result",
                                         "tool_use_id": str(message.get("tool_call_id") or ""),
                                         "content": output_text(message.get("content"))}])
        elif role in ("user", "assistant"):
            append_blocks(out, role, _chat_content(message))
    return system, out


def _reply_blocks(api: str, response: dict[str, Any]) -> list[dict[str, Any]] | None:
    if api == CHAT:
        choices = response.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        return _chat_content(message) if isinstance(message, dict) else None
    output = response.get("output")
    if not isinstance(output, list):
        return None
    converted = items_to_messages(output).messages
    return [b for m in converted for b in m["content"]]


def _stop(api: str, response: dict[str, Any]) -> str | None:
    if api == CHAT:
        choices = response.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        reason = first.get("finish_reason") if isinstance(first, dict) else None
    else:
        reason = response.get("status")
    return reason if isinstance(reason, str) else None


def response_of(api: str, response: Any) -> dict[str, Any] | None:
    """The response as the Messages API would have said it (None for an error body)."""
    if not isinstance(response, dict):
        return None
    blocks = _reply_blocks(api, response)
    if blocks is None:
        return None
    shaped: dict[str, Any] = {"content": blocks, "stop_reason": _stop(api, response)}
    for key in ("model", "id"):
        if isinstance(response.get(key), str):
            shaped[key] = response[key]
    usage = usage_of(response.get("usage"))
    if usage is not None:
        shaped["usage"] = usage
    return shaped


def turn_metadata(request: dict[str, Any]) -> dict[str, Any] | None:
    """Codex's ``x-codex-turn-metadata``, which it sends in the body's ``client_metadata``
    too (a JSON string): ``request_kind`` (``turn``, ``compaction``, ``prewarm``) and, on a
    compaction, ``compaction.trigger``."""
    metadata = request.get("client_metadata")
    raw = metadata.get(CODEX_METADATA) if isinstance(metadata, dict) else None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _trigger(metadata: dict[str, Any] | None) -> str | None:
    compaction = (metadata or {}).get("compaction")
    trigger = compaction.get("trigger") if isinstance(compaction, dict) else None
    return trigger if trigger in ("auto", "manual") else None


def compaction_call(api: str, request: dict[str, Any]) -> bool:
    """Is this the agent's own compaction call (Codex's local checkpoint, its remote
    ``compaction_trigger``, or a ``responses/compact`` call)?"""
    metadata = turn_metadata(request)
    if api == COMPACT or (metadata or {}).get("request_kind") == "compaction":
        return True
    if api != RESPONSES:
        return False
    items = request.get("input")
    if not isinstance(items, list) or not items:
        return False
    last = items[-1]
    if not isinstance(last, dict):
        return False
    if last.get("type") == "compaction_trigger":
        return True
    return last.get("role") == "user" and not request.get("tools") and \
        CHECKPOINT in part_text(last.get("content"), "input_text", "text")


def body_of(api: str, request: dict[str, Any], response: Any) -> Body:
    """The call in Messages shape. Raises :class:`BadItem` for a field of the wrong type."""
    if api in (RESPONSES, COMPACT):
        converted = items_to_messages(request.get("input"))
        system = [s for s in [request.get("instructions")] if isinstance(s, str) and s]
        system += converted.system
        messages = converted.messages
    else:
        given = request.get("messages")
        system, messages = chat_messages(given if isinstance(given, list) else [])
    shaped: dict[str, Any] = {"system": "\n\n".join(system), "messages": messages}
    for name in ("model", "tools", "metadata"):
        if name in request:
            shaped[name] = request[name]
    limit = next((request[k] for k in MAX_TOKEN_KEYS if k in request), None)
    if limit is not None:
        shaped["max_tokens"] = limit
    thread = request.get("prompt_cache_key")
    metadata = turn_metadata(request)
    return Body(api=api, request=shaped, response=response_of(api, response),
                session=thread if isinstance(thread, str) and thread else None,
                compaction=compaction_call(api, request), codex=metadata is not None,
                trigger=_trigger(metadata),
                prewarm=(metadata or {}).get("request_kind") == "prewarm")


@dataclass
class ResponseChain:
    """A Responses client that sends ``previous_response_id`` sends only its new input: the
    server holds the rest. The history is that response's request and reply, then the
    input, so the call reads as the whole history a stateless client would have sent."""

    known: dict[str, tuple[list[Message], Message | None]] = field(default_factory=dict)

    def link(self, shaped: dict[str, Any], raw: dict[str, Any]) -> str | None:
        """Put the history ``raw`` continues in front of ``shaped``'s messages. Returns the
        ``previous_response_id`` when that response is not in the file: the server held
        a history the recording never saw, so the caller must say the request's history
        starts at its own input rather than show it as the whole conversation."""
        previous = raw.get("previous_response_id")
        if previous is None or previous == "":
            return None
        if not isinstance(previous, str) or previous not in self.known:
            return str(previous)
        messages, reply = self.known[previous]
        before = [*messages, reply] if reply is not None else list(messages)
        shaped["messages"] = before + list(shaped["messages"])
        return None

    def remember(self, messages: list[Message], response: dict[str, Any] | None) -> None:
        """A response another call may continue (the lists are kept, never copied)."""
        rid = (response or {}).get("id")
        if isinstance(rid, str):
            content = (response or {}).get("content")
            reply = {"role": "assistant", "content": content} if content else None
            self.known[rid] = (messages, reply)
