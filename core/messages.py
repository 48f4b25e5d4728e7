"""Helpers for Anthropic Messages-format history, and the API validator.

The validator is the judge of every compaction: a history is *API-valid* when every
``tool_result`` answers a ``tool_use`` of the assistant message right before it, and every
``tool_use`` is answered in the user message right after it. Break switches (teaching lab)
are only visible because this check reports what they broke.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


class HistoryError(ValueError):
    """Input that is not a usable message history; the message says what and where."""


def blocks(message: Message) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def is_block(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


def tool_use_ids(message: Message) -> list[str]:
    return [b.get("id", "") for b in blocks(message) if is_block(b, "tool_use")]


def tool_result_ids(message: Message) -> list[str]:
    return [b.get("tool_use_id", "") for b in blocks(message) if is_block(b, "tool_result")]


def has_tool_use(message: Message) -> bool:
    uses = (is_block(b, "tool_use") for b in blocks(message))
    return message.get("role") == "assistant" and any(uses)


def has_tool_result(message: Message) -> bool:
    results = (is_block(b, "tool_result") for b in blocks(message))
    return message.get("role") == "user" and any(results)


def iter_tool_results(messages: list[Message]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """``(message_idx, block_idx, block)`` of every tool_result in a user message, in order."""
    for mi, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        for bi, block in enumerate(blocks(message)):
            if is_block(block, "tool_result"):
                yield mi, bi, block


def tool_names(messages: list[Message]) -> dict[str, str]:
    """Map tool_use id → tool name, for labelling results."""
    return {
        b.get("id", ""): b.get("name", "")
        for m in messages
        for b in blocks(m)
        if is_block(b, "tool_use")
    }


def tool_name(messages: list[Message], use_id: str) -> str:
    """The name of the tool_use ``use_id`` in ``messages`` (the last one, should the id be
    used twice), or ``""``: what ``tool_names(messages).get(use_id, "")`` says, found from
    the end, where the call a result answers sits, instead of mapping the whole history."""
    for message in reversed(messages):
        for block in reversed(blocks(message)):
            if is_block(block, "tool_use") and block.get("id", "") == use_id:
                return block.get("name", "")  # as recorded, as the map holds it
    return ""


def message_text(message: Message) -> str:
    """The plain text of a message: a string content, or its ``text`` blocks joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in blocks(message) if is_block(b, "text") and b.get("text")
    )


def system_text(system: Any) -> str:
    """A request's ``system`` as text, whether sent as a string or as text blocks.

    Requests come from other clients too (a watched agent, a recording): a block whose
    ``text`` is not a string is left out rather than failing the join."""
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b["text"] for b in system
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def splits_pair(messages: list[Message], cut: int) -> bool:
    """True when cutting before ``messages[cut]`` separates a tool_use from its results."""
    if cut <= 0 or cut >= len(messages):
        return False
    return has_tool_result(messages[cut]) and has_tool_use(messages[cut - 1])


@dataclass(frozen=True)
class Violation:
    """One way a history would be refused by the Messages API."""

    kind: str  # "orphan_tool_result" | "unanswered_tool_use"
    message_index: int
    tool_use_id: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message_index": self.message_index,
                "tool_use_id": self.tool_use_id}


def validate_pairs(messages: list[Message], *, allow_pending: bool = True) -> list[Violation]:
    """Report orphan tool_results and unanswered tool_uses.

    ``allow_pending``: a final assistant message whose tool_uses have not been answered *yet*
    is not a violation (the loop is about to run the tools).
    """
    found: list[Violation] = []
    for i, message in enumerate(messages):
        prev = messages[i - 1] if i > 0 else None
        if message.get("role") == "user":
            offered = set(tool_use_ids(prev)) if prev and prev.get("role") == "assistant" else set()
            for rid in tool_result_ids(message):
                if rid not in offered:
                    found.append(Violation("orphan_tool_result", i, rid))
        if message.get("role") == "assistant":
            uses = tool_use_ids(message)
            if not uses:
                continue
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is None and allow_pending:
                continue
            answered = set(tool_result_ids(nxt)) if nxt and nxt.get("role") == "user" else set()
            found.extend(Violation("unanswered_tool_use", i, u) for u in uses if u not in answered)
    return found


def api_pairing_error(messages: list[Message]) -> str | None:
    """The Messages API's own 400 ``invalid_request_error`` text for the first broken pair,
    or None when every pair is whole.

    Worded as the API words it (the texts its users report verbatim), so a scripted run that
    breaks pairing fails exactly as a live one would: an orphan ``tool_result`` names its
    block (``messages.3.content.0``), unanswered ``tool_use`` ids are listed for their
    message (``messages.2``). The API reads the messages in order and stops at the first.
    """
    for i, message in enumerate(messages):
        prev = messages[i - 1] if i > 0 else None
        if message.get("role") == "user":
            offered = set(tool_use_ids(prev)) if prev and prev.get("role") == "assistant" \
                else set()
            for j, block in enumerate(blocks(message)):
                rid = block.get("tool_use_id", "") if is_block(block, "tool_result") else None
                if rid is not None and rid not in offered:
                    return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {rid}. Each `tool_result` block must have "
                            f"a corresponding `tool_use` block in the previous message.")
        elif message.get("role") == "assistant":
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = set(tool_result_ids(nxt)) if nxt and nxt.get("role") == "user" else set()
            missing = [u for u in tool_use_ids(message) if u not in answered]
            if missing and nxt is not None:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {', '.join(missing)}. Each `tool_use` "
                        f"block must have a corresponding `tool_result` block in the next "
                        f"message.")
    return None


def check_history(data: Any) -> list[Message]:
    """Validate untrusted input as a message list, or raise :class:`HistoryError`.

    Used by ``ctxlab compact`` and session loading: wrong shapes get a one-line reason that
    names the message (and block) at fault, never a traceback.
    """
    if not isinstance(data, list):
        raise HistoryError(f"expected a JSON array of messages, got {type(data).__name__}")
    for i, message in enumerate(data):
        where = f"message {i}"
        if not isinstance(message, dict):
            raise HistoryError(f"{where}: expected an object, got {type(message).__name__}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise HistoryError(f"{where}: 'role' must be \"user\" or \"assistant\", got {role!r}")
        if "content" not in message:
            raise HistoryError(f"{where}: missing 'content'")
        content = message["content"]
        if not isinstance(content, str | list):
            raise HistoryError(f"{where}: 'content' must be a string or a list of blocks")
        if isinstance(content, list):
            _check_blocks(content, role, where)
    for v in validate_pairs(data):
        if v.kind == "orphan_tool_result":
            raise HistoryError(
                f"message {v.message_index}: tool_result {v.tool_use_id!r} answers no tool_use"
                " in the assistant message before it"
            )
    return data


def _check_blocks(content: list[Any], role: str, where: str) -> None:
    for j, block in enumerate(content):
        at = f"{where}, block {j}"
        if not isinstance(block, dict):
            raise HistoryError(f"{at}: expected an object, got {type(block).__name__}")
        kind = block.get("type")
        if not isinstance(kind, str):
            raise HistoryError(f"{at}: missing 'type'")
        if kind == "tool_result":
            if role != "user":
                raise HistoryError(f"{at}: tool_result outside a user message")
            if not isinstance(block.get("tool_use_id"), str):
                raise HistoryError(f"{at}: tool_result without a string 'tool_use_id'")
            if not isinstance(block.get("content", ""), str | list):
                raise HistoryError(f"{at}: tool_result 'content' must be a string or a list")
        elif kind == "tool_use":
            if role != "assistant":
                raise HistoryError(f"{at}: tool_use outside an assistant message")
            if not isinstance(block.get("id"), str):
                raise HistoryError(f"{at}: tool_use without a string 'id'")
        elif kind == "text" and not isinstance(block.get("text"), str):
            raise HistoryError(f"{at}: text block without a string 'text'")
