"""The watch screen over a real proxy, hosted by the workbench as ``ctxlab watch`` opens it:
a scripted SDK client micro-compacts its history and the screen shows its requests, the
selected one's breakdown, the client stage and the body."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest

from core.compact.breakdown import MESSAGE_CATEGORIES
from core.events import WatchRequest
from core.sources.watch.analysis import analyse_request
from core.sources.watch.source import WatchOptions, WatchSource
from tui.app import AppConfig, CtxlabApp
from tui.i18n import set_language
from tui.screens.viewer import Viewer
from tui.screens.watch import WatchScreen
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.watch_detail import RequestDetail, breakdown_lines
from tui.widgets.watch_requests import RequestTable

pytestmark = pytest.mark.anyio
TOOLS = [{"name": "bash", "description": "Run.", "input_schema": {"type": "object"}}]
PLACEHOLDER = "[Old tool result content cleared]"


def scripted_client(url: str) -> None:
    """Two tool rounds, then the oldest result replaced by a placeholder."""
    client = anthropic.Anthropic(base_url=url, api_key="k")
    history: list[dict[str, Any]] = [{"role": "user", "content": "List the files."}]
    for _ in range(3):
        reply = client.messages.create(model="claude-test", max_tokens=50, system="agent",
                                       tools=TOOLS, messages=history)
        history.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
        if reply.stop_reason != "tool_use":
            break
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": reply.content[-1].id,
             "content": "file.txt\n" * 300}]})
        if len(history) == 5:
            first = history[2]["content"][0]
            history[2] = {"role": "user", "content": [{**first, "content": PLACEHOLDER}]}


async def wait_until(check, pilot, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError("timed out")


async def test_the_watch_screen_shows_requests_breakdown_stages_and_body(messages_server,
                                                                        tmp_path):
    messages_server.reply_tool_use("bash", {"command": "ls"})
    messages_server.reply_tool_use("bash", {"command": "ls -a"})
    messages_server.reply_text("Two files.")
    source = WatchSource(WatchOptions(upstream=messages_server.url, port=0, root=tmp_path))
    app = CtxlabApp(AppConfig(scenario=None, source=lambda _workspace: source,
                              workspace=tmp_path / "w", theme="ctxlab-dark"))
    async with app.run_test(size=(180, 50)) as pilot:
        await wait_until(source.ready.is_set, pilot)
        assert app.source is source and not app.query("#prompt")
        await asyncio.to_thread(scripted_client, source.proxy.url)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_until(lambda: len(screen.responses) == 3, pilot)
        table = screen.query_one(RequestTable)
        assert table.row_count == 3
        assert table.get_cell("3", "delta") == "+2 ~1"
        assert table.get_cell("1", "in") == "25"
        assert table.get_cell("3", "stop") == "end_turn"
        stages = str(screen.query_one("#watch-stages").render())
        assert "client_micro_compact (by watched client)" in stages and PLACEHOLDER in stages

        table.focus()
        table.move_cursor(row=2)
        await pilot.pause()
        detail = str(screen.query_one(RequestDetail).render())
        assert "tool results" in detail and "client_micro_compact" in detail
        assert "input_tokens 25" in detail

        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, Viewer)
        assert PLACEHOLDER in app.screen.text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, WatchScreen)
        # the same seam: the client's stage is on the workbench's Stages panel too
        timeline = app.default_screen.query_one(StageTimeline)
        assert [r.event.by for r in timeline.stages] == ["client"]
        url = source.proxy.url
        await app.end_session()  # leaving the workbench ends the source: proxy closed
        await pilot.pause(0.1)
        assert app.finished  # its run_end arrived
    with pytest.raises(anthropic.APIConnectionError):
        anthropic.Anthropic(base_url=url, api_key="k", max_retries=0).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])



def test_the_detail_breakdown_is_the_requests_own_in_the_ui_language() -> None:
    body = {"model": "m", "system": "agent", "tools": TOOLS, "messages": [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "file.txt\n" * 300}]}]}
    facts = analyse_request("/v1/messages", body)
    request = WatchRequest(id=1, method="POST", path="/v1/messages", time="t",
                           chars=facts.chars, breakdown=facts.breakdown)
    lines = breakdown_lines(request)
    assert lines[0] == f"messages: {facts.chars:,} chars"
    rows = lines[1:1 + len(MESSAGE_CATEGORIES)]
    assert sum(int(line.split()[-2].replace(",", "")) for line in rows) == facts.chars
    assert lines[1 + len(MESSAGE_CATEGORIES)] == "sent besides the messages"
    assert "tool definitions" in lines[-1] and "system prompt" in lines[-2]
    set_language("zh")
    try:
        assert "工具结果" in "\n".join(breakdown_lines(request))
    finally:
        set_language("en")
