"""The watch scene of the screenshots and the snapshot test: a canned watched client.

The source goes through the same ``measure_request`` / ``response_event`` the live watch
uses, on three requests of a client that micro-compacts its oldest tool result, at fixed
times and sizes, so the picture only changes when the watch screen does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

from core.events import RunStart, WatchStart
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request, response_event
from core.sources.watch.source import WatchOptions, WatchSource

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


class CannedSource(WatchSource):
    """The live watch's source with the proxy left out: its requests are canned, and the
    workbench shows it through the very path ``ctxlab watch`` takes."""

    def __init__(self) -> None:
        super().__init__(WatchOptions(record=False, in_process=True))

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        return cls()

    async def open(self) -> RunStart:
        return RunStart(provider="watch", workspace="~/project")

    async def play(self) -> None:
        self.emit(WatchStart(listen="http://127.0.0.1:8787",
                             upstream="https://api.anthropic.com",
                             recording=".ctxlab/watch/20261203T073000000000Z.jsonl"))
        conversations = Conversations()
        for n, body in enumerate(bodies(), 1):
            x = Exchange(id=n, method="POST", path="/v1/messages",
                         body=json.dumps(body).encode(), started=STARTED + 10 * n)
            _, request, stages = measure_request(x, conversations)
            self._kept.add(n, x.body)  # kept as the live watch keeps it: the diff reads it
            for event in (request, *stages):
                self.emit(event)
            x.status, x.content_type = 200, "application/json"
            x.chunks = [reply(n, "end_turn" if n == 3 else "tool_use")]
            x.duration_ms, x.ttfb_ms = 1500.0 + n, 1400.0 + n
            self.emit(response_event(x)[1])
        await self.controls.until_finished()

    async def close(self) -> None:
        """Nothing was started."""


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


def canned_watch_app(root: Path, lang: str = "en") -> Any:
    """The workbench hosting the watch screen on the canned source, as ``ctxlab watch``
    (``ctxlab --lang zh watch`` with ``lang="zh"``)."""
    from tui.app import AppConfig, CtxlabApp

    return CtxlabApp(AppConfig(scenario=None, source=lambda _workspace: CannedSource(),
                               workspace=root / "watch", theme="ctxlab-dark",
                               display_workspace="~/project", lang=lang))
