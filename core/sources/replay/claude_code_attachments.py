"""Claude Code's ``attachment`` records as the text it sends to the API.

An attachment is context Claude Code adds beside a prompt — the agent types the Agent tool
may start, the skills, a file the user mentioned or that was read before a compaction. It
is written to the transcript as data, and sent as ``<system-reminder>`` text blocks in the
user message, ahead of the prompt it came with — or, for the models that take a
``role: "system"`` message mid-conversation, as one such message after the prompt, its
attachments' texts joined by a line break and without the reminder tags (Claude Code 2.1.197
does so for ``claude-opus-4-8`` and ``claude-fable-5``, its default model and the newest:
every other model it offers gets the reminders). The transcript does not say which form
went out; the model its replies came from does. The original's history must count them,
so the kinds seen in the real requests are rendered the way those requests show them; any
other kind is not known to be sent and is skipped (and counted as skipped).
"""

from __future__ import annotations

import json
from typing import Any

SENT_KINDS = ("agent_listing_delta", "skill_listing", "file")
SYSTEM_MESSAGE_MODELS = ("claude-opus-4-8", "claude-fable-5")
OPEN, CLOSE = "<system-reminder>\n", "\n</system-reminder>"


def takes_system_messages(model: str | None) -> bool:
    """Does Claude Code send attachments to ``model`` as ``role: "system"`` messages?"""
    return bool(model) and str(model).startswith(SYSTEM_MESSAGE_MODELS)


def unwrapped(blocks: list[dict[str, str]]) -> str:
    """The attachment's text as a system message carries it: no reminder tags."""
    return "\n".join(b["text"].removeprefix(OPEN).removesuffix(CLOSE) for b in blocks)


def reminder(text: str) -> dict[str, str]:
    return {"type": "text", "text": f"{OPEN}{text}{CLOSE}"}


def _lines(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _numbered(text: str, start: int) -> str:
    """The Read tool's output: ``<n>\\t<line>`` per line."""
    return "\n".join(f"{start + i}\t{line}" for i, line in enumerate(text.split("\n")))


def _file(attachment: dict[str, Any]) -> list[dict[str, str]]:
    """A file attachment is sent as a Read call and its result, each a reminder."""
    content = attachment.get("content")
    file = content.get("file") if isinstance(content, dict) else None
    if not isinstance(file, dict) or not isinstance(file.get("content"), str):
        return []
    path = file.get("filePath") or attachment.get("filename") or ""
    given = file.get("startLine")
    start = given if isinstance(given, int) else 1
    call = json.dumps({"file_path": path}, ensure_ascii=False, separators=(",", ":"))
    return [reminder(f"Called the Read tool with the following input: {call}"),
            reminder(f"Result of calling the Read tool:\n{_numbered(file['content'], start)}")]


def attachment_blocks(attachment: Any) -> list[dict[str, str]] | None:
    """The text blocks Claude Code sends for ``attachment``; None for a kind it is not
    known to send (or a malformed one)."""
    if not isinstance(attachment, dict):
        return None
    kind = attachment.get("type")
    if kind == "agent_listing_delta":
        added = _lines(attachment.get("addedLines"))
        return [reminder("Available agent types for the Agent tool:\n" + "\n".join(added))] \
            if added else []
    if kind == "skill_listing" and isinstance(attachment.get("content"), str):
        return [reminder("The following skills are available for use with the Skill tool:"
                         f"\n\n{attachment['content']}")]
    if kind == "file":
        return _file(attachment) or None
    return None
