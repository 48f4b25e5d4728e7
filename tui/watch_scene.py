"""The watch scene of the screenshots and the snapshot test: a canned watched client.

The source goes through the same ``measure_request`` / ``response_event`` the live watch
uses, on three requests of a client that micro-compacts its oldest tool result, at fixed
times and sizes, so the picture only changes when the watch screen does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.events import Event, RunEnd, WatchStart
from core.sources import CANCEL
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request, response_event

SIZE = (150, 40)
STARTED = 1_796_283_000.0  # a fixed wall-clock time: 2026-12-03T07:30:00Z
TOOLS = [{"name": "bash", "description": "Run a shell command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def _use(n: int) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "bash", "input": {"command": "ls"}}]}


def _result(n: int, content: str) -> dict[str, Any]:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": content}]}


def bodies() -> list[dict[str, Any]]:
    base = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "system": "You are an agent.",
            "tools": TOOLS}
    ask = {"role": "user", "content": "List the files, twice."}
    listing = "file.txt\n" * 300
    return [
        {**base, "messages": [ask]},
        {**base, "messages": [ask, _use(1), _result(1, listing)]},
        {**base, "messages": [ask, _use(1), _result(1, "[Old tool result content cleared]"),
                              _use(2), _result(2, listing)]},
    ]


def reply(n: int, stop: str) -> bytes:
    content = [{"type": "text", "text": "Done."}] if stop == "end_turn" else _use(n)["content"]
    return json.dumps({"id": f"msg_{n}", "type": "message", "role": "assistant",
                       "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop,
                       "stop_sequence": None,
                       "usage": {"input_tokens": 1200 * n, "output_tokens": 40,
                                 "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 900 * (n - 1)}}).encode()


class CannedSource:
    """An event source with ``async run(emit)``, as the live watch, but canned."""

    name = "watch"
    kind = "proxy"
    capabilities = frozenset({CANCEL})

    async def run(self, emit: Callable[[Event], Any]) -> None:
        emit(WatchStart(listen="http://127.0.0.1:8787", upstream="https://api.anthropic.com",
                        recording=".ctxlab/watch/20261203T073000000000Z.jsonl"))
        conversations = Conversations()
        for n, body in enumerate(bodies(), 1):
            x = Exchange(id=n, method="POST", path="/v1/messages",
                         body=json.dumps(body).encode(), started=STARTED + 10 * n)
            _, request, stages = measure_request(x, conversations)
            for event in (request, *stages):
                emit(event)
            x.status, x.content_type = 200, "application/json"
            x.chunks = [reply(n, "end_turn" if n == 3 else "tool_use")]
            x.duration_ms, x.ttfb_ms = 1500.0 + n, 1400.0 + n
            emit(response_event(x)[1])
        try:
            await asyncio.Event().wait()
        finally:
            emit(RunEnd(ok=True, turns=0))


async def settle_watch(pilot: Any) -> None:
    """Until the three requests are listed, then select the third (the compacting one)."""
    for _ in range(100):
        if pilot.app.screen.query("#watch-requests") and \
                pilot.app.screen.query_one("#watch-requests").row_count == 3:
            break
        await pilot.pause(0.02)
    await pilot.press("down", "down")
    await pilot.pause(0.2)
    pilot.app.clear_notifications()
    await pilot.pause()


def canned_watch_app(root: Path) -> Any:
    """The workbench hosting the watch screen on the canned source, as ``ctxlab watch``."""
    from tui.app import AppConfig, CtxlabApp

    return CtxlabApp(AppConfig(scenario=None, source=lambda _workspace: CannedSource(),
                               workspace=root / "watch", theme="ctxlab-dark",
                               display_workspace="~/project"))
