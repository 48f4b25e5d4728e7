"""Live mode shows the API's cache usage, the turn's cost and who manages the context."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from core.providers.api_context import ApiContext, ServerCompaction
from tests.support.messages_server import MessagesServer
from tests.tui.conftest import turn_done, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.widgets.cache_line import CacheLine, share_spark
from tui.widgets.run_status import RunStatus

pytestmark = pytest.mark.anyio

USAGE = {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 1_000,
         "cache_read_input_tokens": 3_000}


async def ask(app: CtxlabApp, pilot, text: str) -> None:
    prompt = app.query_one("#prompt", Input)
    prompt.focus()
    await pilot.press(*text)
    await pilot.press("enter")


async def test_the_meter_shows_cache_usage_and_the_turn_cost(
        messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    messages_server.reply_text("hello", usage=USAGE)
    messages_server.reply_text("[]")  # the memory extractor finds nothing durable
    app = CtxlabApp(AppConfig(scenario=None, workspace=tmp_path, provider="anthropic",
                              model="claude-sonnet-4-6",
                              api_context=ApiContext(compaction=ServerCompaction())))
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        line = app.query_one(CacheLine)
        assert not line.display  # nothing billed yet
        await ask(app, pilot, "hi")
        await wait_for(pilot, lambda: line.display)
        await turn_done(pilot)
        text = str(line.render())
        assert "in 100 · cache write 1,000 · cache read 3,000 · out 50" in text
        assert "cache hits 73%" in text  # 3,000 of 4,100 billed input
        main = 100 * 3 + 1_000 * 3.75 + 3_000 * 0.3 + 50 * 15
        extract = 25 * 3 + 12 * 15  # the memory extractor's call is billed to the turn too
        cost = (main + extract) / 1e6
        assert f"${cost:.4f}" in text and "claude-sonnet-4-6" in text
        assert "context: s08 pipeline + API compaction" in str(app.query_one(RunStatus).render())


def test_the_share_sparkline_has_one_bar_per_call():
    assert share_spark([0.0, 0.5, 1.0]) == "▁▅█"
