"""Saved sessions (core/sources/agent/saved.py): saved after every turn, resumed exactly, and
a failure mid-run leaves the last completed turn on disk.

The end-to-end tests go through ``ctxlab run --headless --provider anthropic`` with the SDK
pointed at the scripted Messages server by its own environment variables.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.events import Event, Recorder, TurnStart
from core.messages import validate_pairs
from core.providers.anthropic import AnthropicProvider
from core.sources.agent.saved import SessionError, load_session, save_session, session_dir
from core.sources.agent.session import AgentSession, RunOptions
from tests.support.messages_server import MessagesServer
from tui.cli import main


def session_file(workspace: Path, name: str) -> Path:
    return workspace / ".ctxlab" / "sessions" / name / "session.json"


def read_session(workspace: Path, name: str) -> dict:
    return json.loads(session_file(workspace, name).read_text(encoding="utf-8"))


def cli(workspace: Path, *args: str) -> int:
    return main(["run", "--headless", "--provider", "anthropic", "--json",
                 "--workspace", str(workspace), *args])


def text_turn(server: MessagesServer, answer: str) -> None:
    server.reply_text(answer)
    server.reply_text("[]")  # extract


# -- the file --------------------------------------------------------------------------------

def test_save_and_load_round_trip(tmp_path):
    messages = [{"role": "user", "content": "hi ✓"},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]
    path = save_session(tmp_path, "work-1", messages, 1)
    assert path == session_file(tmp_path, "work-1")
    assert load_session(tmp_path, "work-1") == (messages, 1)


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".hidden", "x" * 65])
def test_unsafe_session_names_are_refused(tmp_path, name):
    with pytest.raises(SessionError):
        session_dir(tmp_path, name)


def test_a_missing_or_broken_session_is_a_clear_error(tmp_path):
    with pytest.raises(SessionError, match="no saved session 'nope'"):
        load_session(tmp_path, "nope")
    path = session_file(tmp_path, "bad")
    path.parent.mkdir(parents=True)
    orphan = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}]}]
    path.write_text(json.dumps({"version": 1, "turns": 1, "messages": orphan}))
    with pytest.raises(SessionError, match="not a readable session"):
        load_session(tmp_path, "bad")
    path.write_text("{not json")
    with pytest.raises(SessionError, match="not a readable session"):
        load_session(tmp_path, "bad")


# -- saved after each turn ---------------------------------------------------------------------

def test_the_session_is_on_disk_after_each_turn(tmp_path, messages_server):
    server = messages_server
    text_turn(server, "First answer.")
    text_turn(server, "Second answer.")
    seen_at_turn_two: list[dict] = []
    recorder = Recorder()

    def emit(event: Event) -> None:
        recorder(event)
        if isinstance(event, TurnStart) and event.request == "second":
            seen_at_turn_two.append(read_session(tmp_path, "work"))

    provider = AnthropicProvider(base_url=server.url, api_key="test-key", model="claude-test")
    options = RunOptions(workspace=tmp_path, prompts=["first", "second"], provider="anthropic",
                         session="work")
    assert asyncio.run(AgentSession(options, emit, provider=provider).run())

    (during,) = seen_at_turn_two
    assert during["turns"] == 1
    assert during["messages"] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]}]
    after = read_session(tmp_path, "work")
    assert after["turns"] == 2 and len(after["messages"]) == 4
    assert after["messages"][2:] == [
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": [{"type": "text", "text": "Second answer."}]}]


# -- through the command line ----------------------------------------------------------------

def test_session_then_resume_continues_the_saved_conversation(tmp_path, server_env, capsys):
    server = server_env
    server.reply_tool_use("bash", {"command": "echo built"}, id="toolu_build")
    text_turn(server, "Built it.")
    assert cli(tmp_path, "--prompt", "build it", "--session", "work") == 0
    saved = read_session(tmp_path, "work")
    assert saved["turns"] == 1
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant", "user", "assistant"]
    assert saved["messages"][2]["content"][0]["content"].startswith("built")

    before = len(server.requests_to())
    text_turn(server, "It printed built.")
    assert cli(tmp_path, "--prompt", "what did it print?", "--resume", "work") == 0
    capsys.readouterr()

    resumed = server.requests_to()[before].plain["messages"]
    assert resumed[:-1] == saved["messages"]
    assert resumed[-1] == {"role": "user", "content": "what did it print?"}
    assert validate_pairs(resumed, allow_pending=False) == []
    again = read_session(tmp_path, "work")
    assert again["turns"] == 2 and again["messages"][:4] == saved["messages"]


def test_a_failure_on_turn_two_leaves_turn_one_complete(tmp_path, server_env, capsys):
    server = server_env
    text_turn(server, "One done.")
    server.unauthorized()

    code = cli(tmp_path, "--prompt", "one", "--prompt", "two", "--session", "work")

    assert code != 0
    captured = capsys.readouterr()
    assert "authentication_error" in captured.err or "401" in captured.err
    saved = read_session(tmp_path, "work")
    assert saved["turns"] == 1
    assert saved["messages"] == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": [{"type": "text", "text": "One done."}]}]
    # and it is resumable as it stands
    assert load_session(tmp_path, "work") == (saved["messages"], 1)
