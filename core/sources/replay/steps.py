"""Turning a stream of messages into steps: one :class:`Exchange` per model request.

Transcript formats write messages, not requests. A request is implied: everything the agent
appended since its last reply is the request's new input, and the next assistant message is
its reply. Agents also split one message over several lines — Claude Code writes each
content block of one API message as its own line under the same ``message.id``; Codex writes
reasoning, text and each function call as separate items — so consecutive lines of one
reply are merged, and consecutive user lines (tool results of one batch, a prompt typed
after them) become one user message, as the API requires roles to alternate.
"""

from __future__ import annotations

from typing import Any

from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.wording import plural


def as_blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    if content is None or content == "":
        return []
    return [{"type": "text", "text": str(content)}]


def merge_into(target: Message, content: Any) -> Message:
    """``target`` with ``content`` appended (both turned into block lists if needed)."""
    if isinstance(target.get("content"), str) and isinstance(content, str) and not content:
        return target
    return {**target, "content": as_blocks(target.get("content")) + as_blocks(content)}


def _only_results(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _reminder(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and \
        str(block.get("text", "")).startswith("<system-reminder>")


class StepBuilder:
    """Collects messages in order and cuts them into exchanges and compactions."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.pending: list[Message] = []
        self.reply: Message | None = None
        self.reply_id: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.line: int | None = None
        self.timestamp: str | None = None
        self.stop_reason: str | None = None
        self.closed = False
        self.last_id: str | None = None
        self.notes: list[str] = []  # system notes of the user turn being built

    def user(self, content: Any) -> None:
        """A user-side message (a prompt, tool results, Codex's function outputs)."""
        self.flush()
        if self.pending and self.pending[-1].get("role") == "user":
            self.pending[-1] = merge_into(self.pending[-1], content)
        else:
            self.pending.append({"role": "user", "content": content})

    def attachment(self, blocks: list[Any]) -> None:
        """Context sent with the next prompt (Claude Code's attachments): it goes ahead of
        the prompts of the user message being built, after its tool results, as Claude
        Code moves attachments up to the last assistant message or tool result."""
        self.flush()
        if not blocks:
            return
        last = self.pending[-1] if self.pending else None
        if last is None or last.get("role") != "user":
            self.pending.append({"role": "user", "content": list(blocks)})
            return
        content = as_blocks(last.get("content"))
        at = max((i + 1 for i, b in enumerate(content)
                  if isinstance(b, dict) and b.get("type") == "tool_result"), default=0)
        while at < len(content) and _reminder(content[at]):
            at += 1  # after the attachments already there: they keep their order
        self.pending[-1] = {**last, "content": content[:at] + list(blocks) + content[at:]}

    def system_note(self, text: str) -> None:
        """Context sent as one ``role: "system"`` message at the end of the user's turn it
        came with (after its prompts and meta prompts, before the next assistant message)."""
        self.flush()
        if text:
            self.notes.append(text)

    def _place_notes(self) -> None:
        if self.notes:
            self.pending.append({"role": "system", "content": "\n".join(self.notes)})
            self.notes = []

    def sent_without_request(self, message: Message) -> None:
        """A message the agent put in its history itself, with no model request (Claude
        Code's ``<synthetic>`` replies): it is sent with the next request's input."""
        self.flush()
        self._place_notes()
        self.pending.append(message)

    def assistant(self, blocks: list[Any], *, message_id: str | None = None,
                  usage: dict[str, Any] | None = None, model: str | None = None,
                  line: int | None = None, timestamp: str | None = None,
                  stop_reason: str | None = None) -> None:
        """Part of an assistant reply; parts of the same reply are merged.

        A part of the reply just flushed, arriving after some of its tool results (Claude
        Code can write a result before the next ``tool_use`` line of the same message), goes
        back into that reply; the results wait for the next request, as the API needs.
        """
        last = self.recording.steps[-1] if self.recording.steps else None
        if message_id is not None and self.reply is None and self.last_id == message_id \
                and isinstance(last, Exchange) and last.reply is not None \
                and all(_only_results(m) for m in self.pending):
            last.reply = merge_into(last.reply, blocks)
            last.usage = usage or last.usage
            last.stop_reason = stop_reason or last.stop_reason
            return
        same = self.reply is not None and not self.closed and (
            message_id is None or message_id == self.reply_id)
        if same:
            assert self.reply is not None
            self.reply = merge_into(self.reply, blocks)
        else:
            self.flush()
            self._place_notes()
            self.reply = {"role": "assistant", "content": list(blocks)}
            self.reply_id = message_id
            self.timestamp = timestamp
        self.usage = usage or self.usage
        self.model = model or self.model
        self.stop_reason = stop_reason or self.stop_reason
        self.line = line
        if model and not self.recording.model:
            self.recording.model = model

    def close_reply(self, usage: dict[str, Any] | None = None) -> None:
        """The current reply is complete (Codex's ``token_count`` follows every response)."""
        if self.reply is not None and not self.closed:
            self.usage = usage or self.usage
            self.closed = True

    def take_reply(self) -> tuple[Message | None, dict[str, Any] | None]:
        """The reply being built and its usage, removed: a reply that turns out to be no
        request of the conversation (Codex's summary call, written as an ordinary message
        just before its ``compacted`` line). Its input stays pending."""
        reply, usage = self.reply, self.usage
        self.reply, self.reply_id, self.usage, self.stop_reason = None, None, None, None
        self.closed = False
        return reply, usage

    def flush(self) -> None:
        if self.reply is None:
            return
        self.recording.steps.append(Exchange(
            input=self.pending, reply=self.reply, usage=self.usage, model=self.model,
            stop_reason=self.stop_reason, line=self.line, timestamp=self.timestamp))
        self.last_id = self.reply_id
        self.pending = []
        self.reply = None
        self.reply_id = None
        self.usage = None
        self.stop_reason = None
        self.closed = False

    def compaction(self, compaction: Compaction) -> Compaction:
        """The agent compacted: what it had appended before goes with the compaction."""
        self.flush()
        self._place_notes()
        self.last_id = None
        compaction.input = self.pending
        self.pending = []
        self.recording.steps.append(compaction)
        return compaction

    def finish(self) -> None:
        self.flush()
        self._place_notes()
        if self.pending:
            n = len(self.pending)
            they = "it is" if n == 1 else "they are"
            self.recording.note("unanswered", f"the last {plural(n, 'message')} got no reply "
                                f"in the file (an interrupted session?); {they} not replayed")
