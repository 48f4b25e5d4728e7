"""``ctxlab watch``: the real command as a subprocess, an SDK client through it.

``--headless --json`` prints one event per request and per response (and per client stage);
bad options get a one-line message; ``--host`` warns.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from core.sources.watch.source import WatchSource
from tui.cli import main

ROOT = Path(__file__).resolve().parents[3]


def start_watch(upstream: str, cwd: Path, *extra: str) -> tuple[subprocess.Popen, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1"}
    env.pop("ANTHROPIC_BASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "watch", "--headless", "--json", "--port", "0",
         "--upstream", upstream, *extra],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline())["type"] == "run_start"  # every source's first
    first = json.loads(proc.stdout.readline())
    assert first["type"] == "watch_start"
    return proc, first


def test_headless_json_prints_one_event_per_request_and_response(messages_server, tmp_path):
    messages_server.reply_text("hello")
    messages_server.count(7)
    proc, start = start_watch(messages_server.url, tmp_path)
    try:
        client = anthropic.Anthropic(base_url=start["listen"], api_key="sk-secret-key")
        with client.messages.stream(model="claude-test", max_tokens=5,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            assert stream.get_final_text() == "hello"
        client.messages.count_tokens(model="claude-test",
                                     messages=[{"role": "user", "content": "hi"}])
        lines = []
        while len([x for x in lines if x["type"] == "watch_response"]) < 2:
            lines.append(json.loads(proc.stdout.readline()))
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert [json.loads(line)["type"] for line in out.splitlines()] == ["run_end"]  # the seam's end
    # per exchange, its request before its response (the next request may come in between)
    order = [(x["type"], x["id"]) for x in lines]
    assert sorted(order) == [("watch_request", 1), ("watch_request", 2),
                             ("watch_response", 1), ("watch_response", 2)]
    assert order.index(("watch_request", 1)) < order.index(("watch_response", 1))
    assert order.index(("watch_request", 2)) < order.index(("watch_response", 2))
    first_response = next(x for x in lines if x["type"] == "watch_response" and x["id"] == 1)
    assert first_response["usage"] == {"input_tokens": 25, "output_tokens": 12}
    assert start["recording"].startswith(str(tmp_path / ".ctxlab" / "watch"))
    recorded = Path(start["recording"]).read_text(encoding="utf-8")
    assert len(recorded.splitlines()) == 1 and "sk-secret-key" not in recorded


def test_ctxlab_replay_opens_a_watch_recording(messages_server, tmp_path, capsys):
    messages_server.reply_tool_use("bash", {"command": "ls"})
    messages_server.reply_text("done")
    proc, start = start_watch(messages_server.url, tmp_path)
    try:
        client = anthropic.Anthropic(base_url=start["listen"], api_key="k")
        tools = [{"name": "bash", "input_schema": {"type": "object"}}]
        history = [{"role": "user", "content": "go"}]
        reply = client.messages.create(model="m", max_tokens=9, messages=history, tools=tools)
        history += [{"role": "assistant", "content": [b.to_dict() for b in reply.content]},
                    {"role": "user", "content": [{"type": "tool_result", "content": "x" * 500,
                                                  "tool_use_id": reply.content[-1].id}]}]
        with client.messages.stream(model="m", max_tokens=9, messages=history,
                                    tools=tools) as stream:
            stream.get_final_message()
        responses = 0
        while responses < 2:
            responses += json.loads(proc.stdout.readline())["type"] == "watch_response"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    capsys.readouterr()
    assert main(["replay", start["recording"], "--headless", "--json",
                 "--workdir", str(tmp_path / "replay")]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    begin = next(e for e in events if e["type"] == "replay_start")
    assert (begin["format"], begin["requests"]) == ("requests", 2)
    steps = [e for e in events if e["type"] == "replay_step"]
    assert [s["original_messages"] for s in steps] == [1, 3]
    assert all(s["timestamp"] and s["original_tokens"] == 25 for s in steps)


def test_a_host_other_than_localhost_warns(messages_server, tmp_path):
    proc, start = start_watch(messages_server.url, tmp_path, "--host", "0.0.0.0")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert "warning: listening on 0.0.0.0" in err
    assert start["listen"].startswith("http://0.0.0.0:")


@pytest.mark.parametrize(("argv", "message"), [
    (["--upstream", "ftp://x"], "must be an http(s) URL"),
    (["--upstream", "http://127.0.0.1:8787"], "is this proxy itself"),
    (["--json"], "--json needs --headless"),
])
def test_bad_options_get_one_line(argv, message, capsys):
    assert main(["watch", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def _never_serve(monkeypatch) -> None:
    """A watch these options should refuse fails the test instead of serving forever."""
    import tui.cli.cmd_watch

    async def serve(options, emit) -> None:
        raise AssertionError(f"the watch started with {options}")

    monkeypatch.setattr(tui.cli.cmd_watch, "serve", serve)


@pytest.mark.parametrize("upstream", [
    "http://h:99999", "h:abc", "http://h:abc", "[::1", "http://[::1", "http://h:0",
    "http://h:-1", "http://:80",
])
def test_an_upstream_that_is_no_usable_url_is_one_usage_line(upstream, capsys, monkeypatch):
    """Before, a port out of range or an unclosed IPv6 bracket ended in a ValueError
    traceback from the URL parser (and port 0 started a watch)."""
    _never_serve(monkeypatch)
    assert main(["watch", "--headless", "--upstream", upstream]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab watch: --upstream") and err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.parametrize("planted", [".ctxlab", ".ctxlab/watch"])
def test_a_linked_recording_folder_is_one_line_and_nothing_outside_is_written(
        planted, messages_server, tmp_path, capsys, monkeypatch):
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / ".ctxlab").mkdir(parents=True)
    outside.mkdir()
    if planted == ".ctxlab":
        (work / ".ctxlab").rmdir()
    os.symlink(outside, work / planted)
    monkeypatch.chdir(work)
    _never_serve(monkeypatch)
    assert main(["watch", "--headless", "--port", "0",
                 "--upstream", messages_server.url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab watch: ") and "symbolic link" in err
    assert err.count("\n") == 1
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("headless", [["--headless"], []], ids=["headless", "workbench"])
def test_a_busy_port_gets_one_line(messages_server, tmp_path, capsys, monkeypatch, headless):
    """In the workbench too: said before it opens, not a notice in a workbench that then
    watches nothing."""
    import socket

    import tui.cli.cmd_app

    opened: list = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch", lambda config, theme: opened.append(config))
    monkeypatch.chdir(tmp_path)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        code = main(["watch", *headless, "--port", str(port),
                     "--upstream", messages_server.url])
    assert code == 2 and opened == []
    err = capsys.readouterr().err
    assert err.startswith("ctxlab watch: cannot listen on 127.0.0.1") and err.count("\n") == 1


def test_a_sigterm_finishes_the_watch_as_ctrl_c_does(messages_server, tmp_path):
    proc, _ = start_watch(messages_server.url, tmp_path)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"type": "run_end", "t": json.loads(out.splitlines()[-1])["t"], "ok": True,
         "turns": 0}]
    assert err.strip() == "ctxlab watch: stopped"


def test_without_headless_the_workbench_opens_on_the_watch(monkeypatch, tmp_path):
    import tui.cli.cmd_app

    opened = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch", lambda config, theme: opened.append(config) or 0)
    monkeypatch.chdir(tmp_path)
    assert main(["watch", "--port", "9999", "--upstream", "http://127.0.0.1:1"]) == 0
    (config,) = opened
    assert config.scenario is None
    source = config.source(tmp_path / "w")  # made when the workbench starts
    options = source.options
    assert isinstance(source, WatchSource)
    assert (options.host, options.port, options.upstream) == ("127.0.0.1", 9999,
                                                              "http://127.0.0.1:1")
    assert options.root == tmp_path and options.record


@pytest.mark.parametrize(("argv", "env", "lang"), [
    (["--lang", "zh"], {}, "zh"), ([], {"LANG": "zh_CN.UTF-8"}, "zh"),
    (["--lang", "en"], {"LANG": "zh_CN.UTF-8"}, "en"), ([], {"LC_ALL": "C"}, "en")])
def test_the_watch_workbench_speaks_the_language_asked_for(monkeypatch, tmp_path, argv, env,
                                                           lang):
    """``ctxlab --lang zh watch`` (or a Chinese locale) opened an English workbench: the
    language never reached it."""
    import tui.cli.cmd_app

    opened = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch", lambda config, theme: opened.append(config) or 0)
    monkeypatch.chdir(tmp_path)
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main([*argv, "watch", "--port", "0", "--upstream", "http://127.0.0.1:1"]) == 0
    (config,) = opened
    assert config.lang == lang


def test_without_upstream_each_api_goes_to_its_own_host(monkeypatch):
    import argparse

    from tui.cli.cmd_watch import options_from

    args = argparse.Namespace(upstream=None, host=None, port=8787, no_record=True)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    options = options_from(args)
    assert not isinstance(options, str)
    assert (options.upstream, options.messages_upstream) == (None, "https://api.anthropic.com")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9100")
    options = options_from(args)
    assert not isinstance(options, str)
    assert (options.upstream, options.messages_upstream) == (None, "http://127.0.0.1:9100")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8787")
    assert "is this proxy itself" in str(options_from(args))


@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_the_workbench_folder_is_removed_unless_keep_and_the_command_says_so(
        monkeypatch, tmp_path, capsys, keep):
    """The watch workbench's temporary folder went away silently, or not at all if the app
    never unmounted; now the command removes it (unless --keep) and names it either way."""
    import tui.cli.cmd_app

    opened: list[Path] = []

    def launch(config, theme) -> int:  # the workbench writes into its folder, then quits
        opened.append(config.workspace)
        (config.workspace / "notes.md").write_text("written by the workbench")
        return 0

    monkeypatch.setattr(tui.cli.cmd_app, "launch", launch)
    monkeypatch.chdir(tmp_path)
    argv = ["watch", "--port", "0", "--upstream", "http://127.0.0.1:1"]
    assert main([*argv, "--keep"] if keep else argv) == 0
    (folder,) = opened
    err = capsys.readouterr().err
    assert folder.exists() == keep
    if keep:
        assert err == f"ctxlab watch: workspace kept: {folder}\n"
        shutil.rmtree(folder)
    else:
        assert err == f"ctxlab watch: workspace {folder} removed (--keep keeps it)\n"


def test_keep_with_headless_is_one_usage_line(capsys, monkeypatch):
    _never_serve(monkeypatch)
    assert main(["watch", "--headless", "--keep"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab watch: --keep") and err.count("\n") == 1


def test_watch_help_says_what_it_does(capsys):
    from tui.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["watch", "--help"])
    out = capsys.readouterr().out
    assert "point a client" in " ".join(out.split()).lower()
