"""The real Claude Code CLI as a test client, and the scripted model it talks to.

The CLI comes from the npm registry at a pinned version (:mod:`tests.support.npm_clients`).
It runs in print mode with its own ``HOME``, a dummy key and every optional network feature
off, against :class:`ClaudeCodeModel`: the scripted server's responder, which answers by
what Claude Code asks (a session title, a conversation summary, a turn of the scripted
task), because the order of those calls is the client's business.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.messages_server import RecordedRequest
from tests.support.messages_wire import Reply
from tests.support.npm_clients import installed

VERSION = "2.1.197"
PACKAGE = "@anthropic-ai/claude-code"
# What Claude Code appends to the last user message when it asks for a summary (auto
# compaction and /compact alike): how the scripted model tells that call from a turn.
SUMMARY_ASK = "Your task is to create a detailed summary of the conversation so far"
SUMMARY = (
    "<analysis>The user asked for the notes to be read and counted.</analysis>\n<summary>\n"
    "1. Primary Request and Intent: read notes.txt and count its lines.\n"
    "2. Key Technical Concepts: none.\n3. Files and Code Sections: notes.txt (3 lines).\n"
    "4. Errors and fixes: none.\n5. Problem Solving: done.\n6. All user messages: the prompt.\n"
    "7. Pending Tasks: none.\n8. Current Work: counted the lines.\n</summary>"
)


def claude_binary() -> Path:
    """The pinned CLI, installed on first use."""
    return installed(PACKAGE, VERSION, "claude-code", "claude")


def claude_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """An environment with nothing of the developer's: own HOME, dummy key, no telemetry."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OTEL_"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    env.update(extra)
    return env


@dataclass
class Turn:
    """What the scripted model does on one call of a task: content blocks and usage."""

    content: list[dict[str, Any]]
    input_tokens: int = 2_000


@dataclass
class ClaudeCodeModel:
    """Answers Claude Code's calls by content: summaries, side calls, then a task's turns.

    The task is chosen by a marker in the conversation's first message (``tasks``; the
    ``default`` otherwise, which is also what a compacted conversation continues with), and
    its turn by how many tool-result rounds the conversation holds since its last typed
    prompt, so the same script answers correctly after a compaction or a resume.
    """

    default: list[Turn]
    tasks: dict[str, list[Turn]] = field(default_factory=dict)
    summary: str = SUMMARY
    summary_tokens: int = 1_200
    calls: list[str] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        reply = self.answer(body)
        if isinstance(body.get("model"), str):  # the API answers as the model asked for
            reply.model = body["model"]
        return reply

    def answer(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        if SUMMARY_ASK in last_user_text(messages):
            self.calls.append("summary")
            return Reply([{"type": "text", "text": self.summary}],
                         usage={"input_tokens": self.summary_tokens, "output_tokens": 300})
        if not body.get("tools"):
            self.calls.append("side")
            return Reply([{"type": "text", "text": json.dumps({"title": "Count the notes"})}],
                         usage={"input_tokens": 150, "output_tokens": 10})
        first = _text_of(messages[0].get("content")) if messages else ""
        name = next((marker for marker in self.tasks if marker in first), "")
        turns = self.tasks.get(name, self.default)
        step = min(results_since_prompt(messages), len(turns) - 1)
        self.calls.append(f"{name or 'task'}:{step}")
        turn = turns[step]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in turn.content) else "end_turn"
        return Reply(turn.content, stop_reason=stop,
                     usage={"input_tokens": turn.input_tokens, "output_tokens": 40})


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def results_since_prompt(messages: list[dict[str, Any]]) -> int:
    """How many assistant calls were answered with tool results since the last typed prompt."""
    rounds = 0
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            rounds += 1
        else:
            break
    return rounds


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


if __name__ == "__main__":  # ``python -m tests.support.claude_code``: install it now (CI)
    print(claude_binary())
