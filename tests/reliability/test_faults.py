"""The fault matrix, end to end: every way the model API can fail, through the real SDK.

Each case runs ``ctxlab run --headless --provider anthropic --json`` (or a :class:`AgentSession`
where a knob the command line does not expose is needed, such as a short read timeout)
against the scripted Messages server on 127.0.0.1, with the SDK configured by its own
environment variables. What every failing case must show:

* the run ends with ``run_end ok: false``, exit status 1 and exactly one line on stderr
  (``ctxlab run: <reason>``), never a traceback;
* errors compaction cannot fix (auth, network, a broken stream) never trigger compaction;
* the saved session (``--session``) still holds every turn that completed before the fault.

The last test drives the workbench in live mode: a refused prompt is a notice, and the next
prompt works.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import anthropic
import pytest
from textual.widgets import Input, Markdown

from core.events import Error, Recorder, RunEnd
from core.providers.anthropic import AnthropicProvider
from core.sources.agent.saved import load_session
from core.sources.agent.session import AgentSession, RunOptions
from tests.reliability.conftest import of_type, run_cli, session_path
from tests.support.messages_server import MessagesServer, unused_port_url
from tests.tui.conftest import turn_done, wait_for
from tui.app import AppConfig, CtxlabApp

# The SDK's own back-off before its first retry when the server gives no hint:
# 0.5 s × jitter in [0.75, 1]. A gap this long proves the client waited.
MIN_BACKOFF_S = 0.3


def text_turn(server: MessagesServer, answer: str) -> None:
    """One plain answer, then the memory extractor's "nothing durable" side call."""
    server.reply_text(answer)
    server.reply_text("[]")


def assert_failed_cleanly(code: int, events: list[dict], err: str, kind: str) -> dict:
    """Exit 1, one stderr line equal to the single error event, run_end ok false."""
    assert code == 1
    assert "Traceback" not in err
    (reason,) = err.splitlines()
    (error,) = of_type(events, "error")
    assert error["kind"] == kind, error
    assert reason == f"ctxlab run: {error['message']}"
    assert events[-1]["type"] == "run_end" and events[-1]["ok"] is False
    return error


def request_times(server: MessagesServer, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Arrival times of every request the server records from now on."""
    stamps: list[float] = []
    record = server.record

    def stamped(request):  # type: ignore[no-untyped-def]
        stamps.append(time.monotonic())
        record(request)

    monkeypatch.setattr(server, "record", stamped)
    return stamps


# -- refused credentials ----------------------------------------------------------------------

@pytest.mark.parametrize(("status", "error_type"), [(401, "authentication_error"),
                                                    (403, "permission_error")])
def test_refused_credentials_end_the_run_in_one_line_without_compaction(
        tmp_path, capsys, server_env, status, error_type):
    server_env.error(status, error_type, "invalid x-api-key")

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "hello", "--prompt", "again",
                                "--session", "work")

    error = assert_failed_cleanly(code, events, err, "auth")
    assert str(status) in error["message"] and error_type in error["message"]
    assert of_type(events, "stage") == [] and of_type(events, "retry") == []
    assert len(server_env.requests_to()) == 1  # not retried, no summary, no second turn
    assert not session_path(tmp_path, "work").exists()  # no turn completed
    assert server_env.pending == 0


# -- throttling ------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", ["rate_limited", "overloaded"])
def test_throttling_is_retried_with_backoff_visibly_then_succeeds(
        tmp_path, capsys, server_env, monkeypatch, fault):
    stamps = request_times(server_env, monkeypatch)
    getattr(server_env, fault)(headers={})  # no retry-after: the SDK's own back-off applies
    text_turn(server_env, "Hello after the wait.")

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "hello")

    assert code == 0 and err == ""
    (retry,) = of_type(events, "retry")
    status = "429" if fault == "rate_limited" else "529"
    assert retry["purpose"] == "main" and retry["attempt"] == 1 and status in retry["reason"]
    assert of_type(events, "error") == [] and of_type(events, "stage") == []
    first, second, _extract = server_env.requests_to()
    assert first.body == second.body  # the same request, sent again
    assert stamps[1] - stamps[0] >= MIN_BACKOFF_S
    # the retry is announced before the back-off, the answer comes after it
    (response,) = [e for e in of_type(events, "model_response") if e["purpose"] == "main"]
    assert retry["t"] < response["t"]
    assert events[-1] == {**events[-1], "type": "run_end", "ok": True, "turns": 1}


def test_throttling_past_the_retry_budget_is_one_clear_error(tmp_path, capsys, server_env):
    for _ in range(3):  # the first attempt and both retries
        server_env.overloaded()

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "hello")

    error = assert_failed_cleanly(code, events, err, "api")
    assert "529" in error["message"]
    assert [r["attempt"] for r in of_type(events, "retry")] == [1, 2]
    assert of_type(events, "stage") == []


# -- the network goes away --------------------------------------------------------------------

def test_connection_refused_is_clear_and_the_saved_session_is_untouched(
        tmp_path, capsys, server_env, monkeypatch):
    text_turn(server_env, "One done.")
    code, _, err = run_cli(capsys, tmp_path, "--prompt", "one", "--session", "work")
    assert code == 0, err
    saved = session_path(tmp_path, "work").read_bytes()

    monkeypatch.setenv("ANTHROPIC_BASE_URL", unused_port_url())
    code, events, err = run_cli(capsys, tmp_path, "--prompt", "two", "--resume", "work")

    error = assert_failed_cleanly(code, events, err, "network")
    assert "cannot reach" in error["message"]
    assert all(r["reason"].startswith("connection failed") for r in of_type(events, "retry"))
    assert of_type(events, "stage") == []
    assert session_path(tmp_path, "work").read_bytes() == saved
    messages, turns = load_session(tmp_path, "work")
    assert turns == 1 and messages[-1]["content"] == [{"type": "text", "text": "One done."}]


def test_a_stream_that_stalls_mid_way_times_out_and_keeps_completed_turns(
        tmp_path, messages_server):
    server = messages_server
    text_turn(server, "First answer.")
    server.reply_text("a reply that stops arriving", event_delay=2.0)
    provider = AnthropicProvider(base_url=server.url, api_key="test-key", model="claude-test",
                                 timeout=anthropic.Timeout(0.4, connect=2.0))
    recorder = Recorder()
    options = RunOptions(workspace=tmp_path, prompts=["first", "second"], provider="anthropic",
                         session="work")

    started = time.monotonic()
    ok = asyncio.run(AgentSession(options, recorder, provider=provider).run())

    assert not ok and time.monotonic() - started < 5
    (error,) = recorder.of(Error)
    assert error.kind == "network" and "stalled" in error.message and "\n" not in error.message
    assert recorder.events[-1] == RunEnd(ok=False, turns=1, t=recorder.events[-1].t)
    messages, turns = load_session(tmp_path, "work")
    assert turns == 1
    assert messages == [{"role": "user", "content": "first"},
                        {"role": "assistant",
                         "content": [{"type": "text", "text": "First answer."}]}]


# -- broken streams ---------------------------------------------------------------------------

BROKEN_STREAMS = {
    "cut mid-body": lambda s: s.cut_stream("an answer that is cut off", after_events=5),
    "ends without message_stop": lambda s: s.cut_stream("half", after_events=4,
                                                         clean_end=True),
    "garbage event": lambda s: s.reply_text("some text", malformed_at=4),
    "error event mid-stream": lambda s: s.stream_error("partial", after_events=4),
}


@pytest.mark.parametrize("fault", sorted(BROKEN_STREAMS))
def test_a_broken_stream_is_an_error_not_a_crash_and_keeps_completed_turns(
        tmp_path, capsys, server_env, fault):
    text_turn(server_env, "First answer.")
    BROKEN_STREAMS[fault](server_env)

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "first", "--prompt", "second",
                                "--session", "work")

    error = assert_failed_cleanly(code, events, err, "api")
    assert "stream" in error["message"]
    assert of_type(events, "stage") == []
    messages, turns = load_session(tmp_path, "work")
    assert turns == 1 and [m["role"] for m in messages] == ["user", "assistant"]


# -- the prompt is too long -------------------------------------------------------------------

def test_prompt_too_long_twice_compacts_once_then_fails_clearly(tmp_path, capsys, server_env):
    server_env.overflow()
    server_env.reply_text("The user said hello.")  # the reactive summary
    server_env.overflow()  # still too long: no second recovery

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "hello")

    error = assert_failed_cleanly(code, events, err, "overflow")
    assert "prompt is too long" in error["message"]
    assert [s["stage"] for s in of_type(events, "stage")] == ["reactive_compact"]
    (stage,) = of_type(events, "stage")  # the API's own refusal, quoted and not scripted
    assert "prompt is too long" in stage["refusal"] and stage["refusal_scripted"] is False
    purposes = [e["purpose"] for e in of_type(events, "model_request")]
    assert purposes == ["main", "summary", "main"]
    assert len(server_env.requests_to()) == 3 and server_env.pending == 0
    assert of_type(events, "retry") == []  # a 400 is never retried by the SDK


def test_413_is_treated_as_an_overflow_and_recovered(tmp_path, capsys, server_env):
    (tmp_path / "notes.txt").write_text("alpha\n" * 200, encoding="utf-8")
    server_env.reply_tool_use("read_file", {"path": "notes.txt"}, id="toolu_notes")
    server_env.too_large()
    server_env.reply_text("The agent read notes.txt.")  # the reactive summary
    text_turn(server_env, "Recovered.")

    code, events, err = run_cli(capsys, tmp_path, "--prompt", "read notes.txt",
                                "--session", "work")

    assert code == 0 and err == ""
    assert of_type(events, "error") == [] and of_type(events, "retry") == []
    (stage,) = of_type(events, "stage")
    assert stage["stage"] == "reactive_compact"
    assert (tmp_path / stage["files"][0]).is_file()  # the history went to a transcript first
    retried = server_env.requests_to()[3].plain["messages"]
    assert retried[0]["content"].startswith("[Reactive compact]\n\nCurrent user request:\n")
    assert json.dumps("The agent read notes.txt.") in retried[0]["content"]
    assert load_session(tmp_path, "work")[1] == 1


# -- the workbench ----------------------------------------------------------------------------

@pytest.mark.anyio
async def test_the_workbench_shows_a_refusal_as_a_notice_and_takes_the_next_prompt(
        messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("CTXLAB_MODEL", "claude-test")
    messages_server.unauthorized()
    text_turn(messages_server, "The second prompt **worked**.")
    app = CtxlabApp(AppConfig(scenario=None, workspace=tmp_path, provider="anthropic",
                              display_workspace="~/project"))
    async with app.run_test(size=(200, 55), notifications=True) as pilot:
        await pilot.pause(0.1)
        prompt = app.query_one("#prompt", Input)
        prompt.focus()
        await pilot.press(*"first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        await turn_done(pilot)
        (notice,) = [n for n in app._notifications if n.severity == "error"]
        assert "401" in notice.message and "\n" not in notice.message
        assert notice.title == "error (auth)"
        assert not app.finished and app.is_running

        prompt.focus()
        await pilot.press(*"second")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("worked" in m.source for m in app.query(Markdown)))
        await turn_done(pilot)
        assert [n for n in app._notifications if n.severity == "error"] == [notice]
        sent = [r.plain["messages"][-1]["content"] for r in messages_server.requests_to()
                if r.body.get("tools")]
        assert sent == ["first", "second"]
        assert messages_server.pending == 0
