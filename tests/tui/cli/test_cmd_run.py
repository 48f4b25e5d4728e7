"""``ctxlab run --headless``: exit codes, stdout discipline, and one-line reasons on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tui
from core.messages import validate_pairs
from tests.support.messages_server import MessagesServer
from tui.cli import main

REPO = Path(tui.__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def headless(*args: str) -> int:
    return main(["run", "--headless", *args])


def clean_env() -> dict[str, str]:
    """The child's environment: no key, no base URL, nothing that could reach a network."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CTXLAB_"))}
    env["PYTHONPATH"] = str(REPO)
    return env


# -- stdout is the event stream, and only that ------------------------------------------------

def test_big_log_in_a_real_process_prints_only_json_lines(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--scenario", "big-log", "--json",
         "--workspace", str(tmp_path)],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines and done.stdout.endswith("\n")
    events = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all(isinstance(e, dict) and {"type", "t"} <= set(e) for e in events)
    assert events[0]["type"] == "run_start" and events[0]["workspace"] == str(tmp_path)
    assert events[-1]["type"] == "run_end" and events[-1]["ok"] is True
    assert [e["stage"] for e in events if e["type"] == "stage"] == ["tool_result_budget"]
    times = [e["t"] for e in events]
    assert times == sorted(times)


def test_event_times_are_seconds_since_the_run_started(tmp_path, capsys):
    path = FIXTURES / "sleepy.yaml"
    assert headless("--scenario", str(path), "--workspace", str(tmp_path), "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    times = [e["t"] for e in events]
    assert times == sorted(times)
    assert events[0]["t"] < 0.3
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["t"] >= 0.3  # stamped after the 0.3 s command, not left at 0
    assert events[-1]["type"] == "run_end" and events[-1]["t"] >= 0.3


def test_without_json_the_log_is_readable_text(tmp_path, capsys):
    assert headless("--scenario", "two-sessions", "--workspace", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "user: Add a helper to billing/invoice.py." in out
    assert "memory written:" in out and "memory recalled (" in out
    assert out.rstrip().endswith("run end: ok after 2 turns")
    assert not any(line.startswith("{") for line in out.splitlines())


def test_a_prompt_without_a_model_is_refused_up_front(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert headless("--prompt", "hello", "--workspace", str(tmp_path)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("ctxlab run: --prompt needs a model")


# -- scenario file errors ------------------------------------------------------------------

@pytest.mark.parametrize(("fixture", "line", "message"), [
    ("bad_yaml.yaml", 8, "invalid YAML"),
    ("unknown_tool.yaml", 8, "unknown tool 'list_dir'"),
    ("unknown_key.yaml", 5, "unknown key(s) in a turn: reply"),
    ("missing_user.yaml", 8, "a turn needs 'user'"),
])
def test_a_bad_scenario_file_exits_2_naming_file_and_line(tmp_path, capsys, fixture, line,
                                                          message):
    path = FIXTURES / fixture
    code = headless("--scenario", str(path), "--workspace", str(tmp_path), "--json")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""  # no run was started
    (reason,) = captured.err.splitlines()
    assert reason.startswith(f"ctxlab run: {path}:{line}: {message}")
    assert "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []  # the workspace was not touched


def test_a_bad_scenario_file_in_a_real_process_has_no_traceback(tmp_path):
    path = FIXTURES / "unknown_tool.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--scenario", str(path), "--json",
         "--workspace", str(tmp_path)],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"ctxlab run: {path}:8: unknown tool 'list_dir'; one of bash, read_file, write_file, "
        "edit_file, glob, compact"]


def test_an_unknown_workspace_generator_is_a_file_line_error(tmp_path, capsys):
    path = FIXTURES / "unknown_workspace.yaml"
    code = headless("--scenario", str(path), "--workspace", str(tmp_path / "ws"), "--json")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith(f"ctxlab run: {path}:2: unknown workspace 'no_such_sample'")


def test_an_unknown_top_level_key_is_a_file_line_error(tmp_path, capsys):
    path = FIXTURES / "unknown_top_key.yaml"
    code = headless("--scenario", str(path), "--workspace", str(tmp_path), "--json")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith(f"ctxlab run: {path}:3: unknown key 'threshold'")


# -- threshold flags on a scenario ------------------------------------------------------------

def test_a_threshold_flag_overrides_one_key_of_the_scenario_budget(tmp_path, capsys):
    # --keep-recent 3 is the default value: passing it must not change what the scenario does
    code = headless("--scenario", "refactor-auth", "--workspace", str(tmp_path), "--json",
                    "--keep-recent", "3")
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    fired = {e["stage"] for e in events if e["type"] == "stage"}
    assert {"snip_compact", "compact_history"} <= fired


# -- a failed run ------------------------------------------------------------------------------

def test_a_401_exits_non_zero_with_one_line_and_an_auth_event(tmp_path, capsys, monkeypatch,
                                                              messages_server: MessagesServer):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("CTXLAB_MODEL", "claude-test")
    messages_server.unauthorized()

    code = headless("--prompt", "hello", "--provider", "anthropic", "--json",
                    "--workspace", str(tmp_path))

    captured = capsys.readouterr()
    assert code == 1
    (reason,) = captured.err.splitlines()
    assert reason.startswith("ctxlab run: ") and "401" in reason
    events = [json.loads(line) for line in captured.out.splitlines()]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["auth"]
    assert reason == f"ctxlab run: {errors[0]['message']}"
    assert not any(e["type"] in ("stage", "retry") for e in events)
    assert events[-1]["type"] == "run_end" and events[-1]["ok"] is False
    assert len(messages_server.requests_to()) == 1


def test_a_tiny_context_limit_flag_reaches_the_loop_and_the_summary_call(
        tmp_path, capsys, monkeypatch, messages_server: MessagesServer):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("CTXLAB_MODEL", "claude-test")
    (tmp_path / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 150, encoding="utf-8")
    messages_server.reply_tool_use("read_file", {"path": "big.txt"})
    messages_server.reply_text("SUMMARY")
    messages_server.reply_text("Done.")
    messages_server.reply_text("[]")

    code = headless("--prompt", "Look at big.txt", "--provider", "anthropic", "--json",
                    "--workspace", str(tmp_path), "--context-limit", "600")

    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert "compact_history" in [e["stage"] for e in events if e["type"] == "stage"]
    summary = [r.body for r in messages_server.requests_to() if r.body["max_tokens"] == 2000]
    (body,) = summary
    assert "tools" not in body and body["system"].startswith("You summarize")
    # every call is announced, the end-of-turn extraction included (it answers "[]")
    assert [e["purpose"] for e in events if e["type"] == "model_request"] == [
        "main", "summary", "main", "extract"]
    for request in messages_server.requests_to():
        assert validate_pairs(request.body["messages"], allow_pending=False) == []
