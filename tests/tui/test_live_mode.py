"""Live mode against a local Messages-API server: prompt in, streamed answer and usage out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Markdown

from core.events import Recorder, RunEnd, TurnEnd
from core.sources.agent.session import AgentSession
from tests.support.messages_server import MessagesServer
from tests.tui.conftest import turn_done, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.widgets.context_meter import ContextMeter

pytestmark = pytest.mark.anyio


async def test_a_prompt_runs_a_live_turn_and_shows_the_api_usage(
        messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    messages_server.reply_text("The **workspace** is empty.",
                               usage={"input_tokens": 1234, "output_tokens": 9})
    messages_server.reply_text("[]")  # the memory extractor finds nothing durable
    app = CtxlabApp(AppConfig(scenario=None, workspace=tmp_path, provider="anthropic",
                              display_workspace="~/project"))
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        assert "provider anthropic" in app.sub_title
        assert "scripted" not in str(app.query_one("#meter-figures").render())
        assert "temporary" not in app.sub_title
        prompt = app.query_one("#prompt", Input)
        prompt.focus()
        await pilot.press(*"what is here?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(ContextMeter).usage_tokens is not None)
        await turn_done(pilot)
        assert app.query_one(ContextMeter).usage_tokens == 1234
        assert "model claude-" in app.sub_title  # as the run reported it
        answer = app.query(Markdown).last()
        assert "workspace" in answer.source
        sent = messages_server.requests_to()[0].body
        # the end of the history carries the prompt-cache breakpoint
        assert sent["messages"][0]["content"] == [
            {"type": "text", "text": "what is here?", "cache_control": {"type": "ephemeral"}}]
        assert not app.finished  # live mode waits for the next prompt
        # The footer lists keys that work from the prompt, not letters it would type.
        keys = {b.binding.key for b in app.active_bindings.values() if b.binding.show}
        assert "escape" in keys and "s" not in keys and "space" not in keys
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert not isinstance(app.focused, Input)
        keys = {b.binding.key for b in app.active_bindings.values() if b.enabled}
        assert "slash" in keys and "v" in keys and "s" not in keys


async def test_three_prompts_are_one_session_saved_after_every_turn(
        messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """Every prompt is a turn of one session: its file and work log are saved after each
    turn, the second prompt sees the first's history, and ``run_end`` comes once, last,
    when the workbench leaves."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    recorder = Recorder()

    class Recorded(AgentSession):  # the session the workbench opens, recorded from its start
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.subscribe(recorder)

    monkeypatch.setattr("tui.app.AgentSession", Recorded)
    app = CtxlabApp(AppConfig(scenario=None, workspace=tmp_path, provider="anthropic",
                              display_workspace="~/project"))
    session_file = tmp_path / ".ctxlab/sessions/default/session.json"
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.1)
        assert isinstance(app.source, AgentSession)
        prompt = app.query_one("#prompt", Input)
        for n, text in enumerate(["one", "two", "three"], start=1):
            messages_server.reply_text(f"answer {n}")
            messages_server.reply_text("[]")  # the memory extractor finds nothing durable
            prompt.focus()
            await pilot.press(*text)
            await pilot.press("enter")
            await wait_for(pilot, lambda n=n: len(recorder.of(TurnEnd)) == n)
            await turn_done(pilot)
            saved = json.loads(session_file.read_text(encoding="utf-8"))
            assert saved["turns"] == n
            assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == \
                ["one", "two", "three"][:n]
            log = json.loads((session_file.parent / "worklog.json").read_text("utf-8"))
            assert text in json.dumps(log)
        main = [r.body for r in messages_server.requests_to() if r.body.get("tools")]
        assert [len(body["messages"]) for body in main] == [1, 3, 5]  # one history
        assert recorder.of(RunEnd) == []  # the session is still open
        await pilot.press("ctrl+q")
    kinds = [e.type for e in recorder.events]
    assert kinds.count("run_end") == 1 and kinds[-1] == "run_end"
    assert recorder.events[-1].ok and recorder.events[-1].turns == 3
    assert kinds.count("run_start") == 1 and kinds[0] == "run_start"  # when it opened
