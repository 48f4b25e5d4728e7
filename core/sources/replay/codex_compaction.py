"""A Codex ``compacted`` line as the agent's compaction: the history it kept, its summary.

Codex compacts in one of two ways, chosen by its provider, and has written the result in
three shapes:

* local (a custom provider): a normal request whose last user message asks for a
  "CONTEXT CHECKPOINT COMPACTION"; the summary it gets back starts the new history. 0.58
  writes ``compacted`` with the summary as ``message`` only, and the new history is the
  session's user messages followed by the summary (Codex rebuilds it from them); 0.171
  also writes the summary call's reply as an ordinary assistant message just before the
  ``compacted`` line, and the new history itself as ``replacement_history``, its summary
  prefixed with "Another language model started to solve this problem…";
* remote (the built-in OpenAI provider): the server answers a ``compaction_trigger`` with
  one ``compaction`` item whose summary is encrypted; ``compacted`` has an empty
  ``message`` and a ``replacement_history`` ending with that item.

``replacement_history`` is what Codex sends from then on, so it is the kept history when
the line has one. The summary file gets the summary's text, or — when it is encrypted —
a note saying so with its size, since the server alone can read it.
"""

from __future__ import annotations

from typing import Any

from core.compact.managers import Manager
from core.sources.replay.codex_usage import counts
from core.sources.replay.model import Compaction, Message
from core.sources.replay.responses_items import BadItem, append_blocks, items_to_messages

SUMMARY_PREFIX = "Another language model started to solve this problem"


def _texts(message: Message) -> list[str]:
    return [b["text"] for b in message.get("content") or []
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"),
                                                                               str)]


def _encrypted(messages: list[Message]) -> list[str]:
    return [b.get("encrypted_content") or "" for m in messages
            for b in m.get("content") or [] if isinstance(b, dict)
            and b.get("type") == "compaction"]


def summary_of(message: str, kept: list[Message]) -> str:
    """What the summary file holds: the summary, or what is known of an encrypted one."""
    if message:
        return message
    sealed = _encrypted(kept)
    if sealed:
        return (f"Codex's summary is encrypted (a remote compaction by the server): "
                f"{sum(len(s) for s in sealed):,} chars of encrypted_content that only the "
                "server can read; Codex sends it back as the last item of its history.")
    said = [t for m in kept for t in _texts(m) if t.startswith(SUMMARY_PREFIX)]
    return said[-1] if said else ""


def kept_history(payload: dict[str, Any], user_messages: list[Message]) -> list[Message]:
    """The history Codex went on with: its ``replacement_history`` when written, else (0.58)
    the session's user messages and the summary, as Codex rebuilds it."""
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        return items_to_messages(replacement).messages
    message = _message(payload)
    kept: list[Message] = []
    for earlier in user_messages:
        append_blocks(kept, "user", list(earlier["content"]))
    if message:
        append_blocks(kept, "user", [{"type": "text", "text": message}])
    return kept


def _message(payload: dict[str, Any]) -> str:
    message = payload.get("message") or ""
    if not isinstance(message, str):
        raise BadItem(f"the compacted message is a {type(message).__name__}, not text")
    return message


def is_summary_reply(reply: Message | None, payload: dict[str, Any]) -> bool:
    """Is ``reply`` the local summary call's answer, which 0.171 writes as an ordinary
    assistant message just before ``compacted``? (Only text, and the summary holds it.)"""
    if reply is None:
        return False
    blocks = reply.get("content")
    if not isinstance(blocks, list) or not blocks or any(
            not isinstance(b, dict) or b.get("type") != "text" for b in blocks):
        return False
    said = "\n".join(str(b.get("text", "")) for b in blocks).strip()
    message = payload.get("message")
    return bool(said) and isinstance(message, str) and said in message


def compaction_of(payload: dict[str, Any], user_messages: list[Message], *,
                  pre_tokens: int | None, usage: dict[str, Any] | None, line: int,
                  timestamp: str | None) -> Compaction:
    """The ``compacted`` line's compaction. Raises :class:`BadItem` for a field of the
    wrong type. The rollout never says whether it was ``/compact``, so it is ``auto``."""
    message = _message(payload)
    kept = kept_history(payload, user_messages)
    return Compaction(by=Manager.CODEX, trigger="auto", summary=summary_of(message, kept),
                      kept=kept, pre_tokens=pre_tokens, usage=usage or _recorded(payload),
                      line=line, timestamp=timestamp)


def _recorded(payload: dict[str, Any]) -> dict[str, Any] | None:
    """0.171's ``latest_token_usage_record``, when it is the compaction call's own."""
    record = payload.get("latest_token_usage_record")
    if not isinstance(record, dict) or \
            record.get("response_id") != payload.get("compaction_response_id"):
        return None
    return counts(record.get("usage"), "compacted.latest_token_usage_record.usage")


def user_items(messages: list[Message]) -> list[Message]:
    """The user messages among ``messages`` that are not tool results (what 0.58 keeps)."""
    return [m for m in messages if m.get("role") == "user" and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in m.get("content")
        or [])]

