"""Request bodies shaped as the real Claude Code CLI 2.1.197 sends them (short texts).

Copied from what the CLI sent through ``ctxlab watch`` (the trimmed bodies are in
tests/fixtures/watch/claude-code-2.1.197-requests.json): the billing block that opens the
system prompt, whose hash follows the first user message; the session id in a header and
in ``metadata.user_id`` (a JSON string); ``role: "system"`` messages in the history; the
summary request (the summary instructions appended to the last user message, tools and
all); the request that continues from the summary; the ``/compact`` command's messages and
the synthetic "No response requested." reply.
"""

from __future__ import annotations

import json
from typing import Any

SESSION = "2451df04-e456-4bf4-8e78-599fa744651b"
AGENT = "ae7dd9dc176458a3c"
CC = {"type": "ephemeral"}
TOOLS = [{"name": "Read", "description": "Reads a file.",
          "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
         {"name": "Bash", "description": "Runs a command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
MAIN_PROMPT = "\nYou are an interactive agent that helps users with software engineering tasks."
SUBAGENT_PROMPT = "You are an agent for Claude Code, Anthropic's official CLI for Claude."
REMINDER = ("<system-reminder>\nAs you answer the user's questions, you can use the following "
            "context:\n# currentDate\nToday's date is 2026-12-05.\n</system-reminder>\n\n")
AGENTS = "Available agent types for the Agent tool:\n- claude: Catch-all for any task."
SKILLS = "The following skills are available for use with the Skill tool:\n\n- deep-research"
SUMMARY_INSTRUCTIONS = (
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n- Do NOT use Read, Bash, "
    "Grep, Glob, Edit, Write, or ANY other tool.\n\nYour task is to create a detailed summary "
    "of the conversation so far, paying close attention to the user's explicit requests and "
    "your previous actions.")
SUMMARY = ("This session is being continued from a previous conversation that ran out of "
           "context. The summary below covers the earlier portion of the conversation.\n\n"
           "Summary:\n1. Primary Request and Intent: read notes.txt and count its lines.")
COMPACT_COMMAND = [
    {"type": "text", "text": "<local-command-caveat>Caveat: The messages below were generated "
     "by the user while running local commands.</local-command-caveat>\n"},
    {"type": "text", "text": "<command-name>/compact</command-name>\n            "
     "<command-message>compact</command-message>\n            <command-args></command-args>\n"},
    {"type": "text", "text": "<local-command-stdout>Compacted </local-command-stdout>\n"},
    {"type": "text", "text": "Continue from where you left off."}]


def system(billing_hash: str, prompt: str = MAIN_PROMPT) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1.197."
             f"{billing_hash}; cc_entrypoint=sdk-cli;"},
            {"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent "
             "SDK.", "cache_control": CC},
            {"type": "text", "text": prompt, "cache_control": CC}]


def body(billing_hash: str, messages: list[dict[str, Any]], *, prompt: str = MAIN_PROMPT,
         session: str = SESSION) -> dict[str, Any]:
    user_id = json.dumps({"device_id": "0" * 64, "account_uuid": "", "session_id": session},
                         separators=(",", ":"))
    return {"model": "claude-opus-4-8", "messages": messages, "system": system(billing_hash,
                                                                                prompt),
            "tools": TOOLS, "metadata": {"user_id": user_id}, "max_tokens": 64000,
            "thinking": {"type": "adaptive"}, "stream": True}


def user(*texts: str, cached: bool = False) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if cached:
        blocks[-1] = {**blocks[-1], "cache_control": CC}
    return {"role": "user", "content": blocks}


def system_message(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def assistant_tools() -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "text", "text": "Reading both files."},
        {"type": "tool_use", "id": "toolu_01read", "name": "Read",
         "input": {"file_path": "/tmp/cc/work/notes.txt"}},
        {"type": "tool_use", "id": "toolu_02bash", "name": "Bash",
         "input": {"command": "wc -l other.txt", "description": "Count lines"}}]}


def results(cached: bool = True) -> dict[str, Any]:
    last: dict[str, Any] = {"tool_use_id": "toolu_02bash", "type": "tool_result",
                            "content": "2 other.txt", "is_error": False}
    return {"role": "user", "content": [
        {"tool_use_id": "toolu_01read", "type": "tool_result",
         "content": "1\talpha\n2\tbeta\n3\tgamma\n4\t", "is_error": False},
        {**last, "cache_control": CC} if cached else last]}


def first_turns() -> list[dict[str, Any]]:
    """Request 2's history: the prompt (with a system message after it), a reply with two
    parallel tool calls, their results."""
    return [user(REMINDER, "Read notes.txt and count the lines of other.txt"),
            system_message(AGENTS), assistant_tools(), results()]


def summary_request(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history with the summary instructions appended to its last user message."""
    last = history[-1]
    plain = [{k: v for k, v in b.items() if k != "cache_control"} for b in last["content"]]
    return [*history[:-1], {"role": "user", "content": [
        *plain, {"type": "text", "text": SUMMARY_INSTRUCTIONS}]}]


def continued(prompt: str) -> list[dict[str, Any]]:
    """The first request after an automatic compaction."""
    return [user(REMINDER, SUMMARY),
            {"role": "assistant", "content": [{"type": "text", "text": "notes.txt has 3 lines."}]},
            user(prompt, cached=True)]


def after_compact_command(prompt: str) -> list[dict[str, Any]]:
    """The first request after ``/compact``: the summary, the command's messages, the
    synthetic reply, the new prompt."""
    return [user(REMINDER, SUMMARY),
            {"role": "assistant", "content": [{"type": "text", "text": "notes.txt has 3 lines."}]},
            {"role": "user", "content": COMPACT_COMMAND}, system_message(AGENTS),
            {"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]},
            user(prompt, cached=True), system_message(SKILLS)]
