"""The real Codex CLI as a test client, and the scripted model it talks to.

The CLI comes from the npm registry at a pinned version (:mod:`tests.support.npm_clients`;
the package ships its native binary). It runs as ``codex exec`` with its own ``CODEX_HOME``
and ``HOME``, a ``config.toml`` naming the provider it talks to, and a dummy key, against
:class:`CodexModel`: the scripted Responses server's responder, which answers by what Codex
asks — a turn of the scripted task, a local checkpoint summary, a remote compaction —
because the order of those calls is the client's business.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.messages_server import RecordedRequest
from tests.support.npm_clients import installed
from tests.support.openai_wire import (
    ResponsesReply,
    compaction_item,
    function_call_item,
    message_item,
    responses_usage,
)

VERSION = "0.171.0"
PACKAGE = "@openai/codex"
# The user message Codex sends when it compacts locally (a custom provider): the history,
# no tools, and this ask; the summary comes back as the reply's text.
CHECKPOINT_ASK = "You are performing a CONTEXT CHECKPOINT COMPACTION"
# How the request after a local compaction carries the summary: the task goes on from there.
HANDOFF = "Another language model started to solve this problem"
SUMMARY = ("Progress so far: the user asked for notes.txt to be read and its lines counted; "
           "`cat notes.txt` ran and showed three lines. Remaining: report the count.")
ENCRYPTED = "gAAAAB" + "x" * 1994  # an opaque remote compaction, 2,000 characters


def codex_binary() -> Path:
    """The pinned CLI, installed on first use."""
    return installed(PACKAGE, VERSION, "codex", "codex")


def codex_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing of the developer's: own HOME and CODEX_HOME, dummy keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env.update(HOME=str(home), CODEX_HOME=str(home / ".codex"), LOCAL_KEY="sk-test-not-a-key",
               OPENAI_API_KEY="sk-test-not-a-key", NO_COLOR="1", RUST_LOG="error")
    env.update(extra)
    return env


def write_config(home: Path, base_url: str, *, provider: str = "local",
                 model: str = "gpt-5-codex", auto_compact: int | None = None,
                 window: int | None = None) -> Path:
    """``CODEX_HOME/config.toml``: the model, its provider pointed at ``base_url`` (a custom
    provider compacts locally; ``provider="openai"`` is the built-in one, which compacts
    remotely), and the automatic compaction threshold."""
    lines = [f'model = "{model}"', f'model_provider = "{provider}"',
             'approval_policy = "never"', 'sandbox_mode = "workspace-write"']
    if auto_compact is not None:
        lines.append(f"model_auto_compact_token_limit = {auto_compact}")
    if window is not None:
        lines.append(f"model_context_window = {window}")
    if provider == "openai":
        lines.append(f'openai_base_url = "{base_url}"')
    else:
        lines += ["", f"[model_providers.{provider}]", f'name = "{provider}"',
                  f'base_url = "{base_url}"', 'wire_api = "responses"', 'env_key = "LOCAL_KEY"']
    lines += ["", "[analytics]", "enabled = false", "", "[feedback]", "enabled = false"]
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("\n".join(lines) + "\n")
    return config


@dataclass
class Turn:
    """One answer of the scripted task: output items, and the usage to report with them."""

    output: list[dict[str, Any]]
    input_tokens: int = 2_000
    output_tokens: int = 60


@dataclass
class CodexModel:
    """Answers Codex's calls by content. ``tasks`` maps a word of the user's prompt to the
    task's turns; a prompt that names none is answered with ``done`` text."""

    tasks: dict[str, list[Turn]] = field(default_factory=dict)
    done: str = "Done."

    def __call__(self, request: RecordedRequest) -> ResponsesReply | None:
        body = request.body if isinstance(request.body, dict) else {}
        return self.answer(body)

    def answer(self, body: dict[str, Any]) -> ResponsesReply:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        if any(i.get("type") == "compaction_trigger" for i in items):
            return ResponsesReply([compaction_item(ENCRYPTED)],
                                  usage=responses_usage(30_000, 900))
        prompt = last_user_text(items)
        if prompt.startswith(CHECKPOINT_ASK):
            return ResponsesReply([message_item(SUMMARY)], usage=responses_usage(30_000, 400))
        if prompt.startswith(HANDOFF) or items[-1].get("type") == "compaction":
            return ResponsesReply([message_item(self.done)], usage=responses_usage(3_000, 20))
        turns = next((t for word, t in self.tasks.items() if word in prompt), [])
        done = results_since_prompt(items)
        if done < len(turns):
            turn = turns[done]
            return ResponsesReply(turn.output,
                                  usage=responses_usage(turn.input_tokens, turn.output_tokens))
        return ResponsesReply([message_item(self.done)], usage=responses_usage(2_500, 20))


def last_user_text(items: list[dict[str, Any]]) -> str:
    """The text of the last user message that is the user's (not Codex's context notes)."""
    for item in reversed(items):
        if item.get("type") == "message" and item.get("role") == "user":
            text = "".join(p.get("text", "") for p in item.get("content") or []
                           if isinstance(p, dict))
            if not text.startswith("<environment_context>"):
                return text
    return ""


def results_since_prompt(items: list[dict[str, Any]]) -> int:
    """Tool rounds answered since the last user message: which turn of a task comes next."""
    rounds, seen_call = 0, False
    for item in reversed(items):
        kind = item.get("type")
        if kind == "message" and item.get("role") == "user":
            break
        if kind in ("function_call_output", "custom_tool_call_output"):
            seen_call = True
        elif seen_call and kind in ("function_call", "custom_tool_call"):
            rounds, seen_call = rounds + 1, False
    return rounds


def exec_command(cmd: str, call_id: str) -> dict[str, Any]:
    """A call of Codex's shell tool, which it runs in its sandbox."""
    return function_call_item("exec_command", {"cmd": cmd}, call_id)


if __name__ == "__main__":  # ``python -m tests.support.codex``: install it now (CI)
    print(codex_binary())
