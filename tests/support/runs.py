"""Drive a whole run over the real SDK against the local Messages-API server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core.events import Recorder
from core.providers.anthropic import AnthropicProvider
from core.sources.agent.session import AgentSession, RunOptions
from tests.support.messages_server import MessagesServer, RecordedRequest


def run_prompts(server: MessagesServer, workspace: Path, prompts: list[str],
                **options: Any) -> tuple[bool, Recorder]:
    """One AgentSession over the real SDK; the provider is made exactly as a caller would."""
    recorder = Recorder()
    provider = AnthropicProvider(base_url=server.url, api_key="test-key", model="claude-test")
    opts = RunOptions(workspace=workspace, prompts=prompts, provider="anthropic", **options)
    ok = asyncio.run(AgentSession(opts, recorder, provider=provider).run())
    return ok, recorder


def main_requests(server: MessagesServer) -> list[RecordedRequest]:
    """The main calls the server received (side calls carry no tools)."""
    return [r for r in server.requests_to() if r.body.get("tools")]
