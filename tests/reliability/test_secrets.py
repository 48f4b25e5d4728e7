"""The API key reaches no file of the workspace, whatever the model makes ``bash`` print.

A real ``ctxlab run --headless --provider anthropic --json`` process (the real SDK against the
local Messages server) with the key in its environment and in a ``.bashrc`` of its HOME; the
scripted model runs ``env``, ``printenv``, ``cat ~/.bashrc``, reads ctxlab's own
``/proc/PID/environ``, prints the key thousands of times (spooled to the archive), reads a
``.env``-like file, and compacts (a transcript). Then every byte of every file under the
workspace, the event stream and every request body the model was sent are searched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import tui
from core.config import Thresholds
from core.tools.secrets import marker
from tests.support.messages_server import MessagesServer
from tests.support.runs import run_prompts

REPO = Path(tui.__file__).resolve().parent.parent


def child_env(home: Path, server: MessagesServer, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CTXLAB_"))}
    env.update(PYTHONPATH=str(REPO), HOME=str(home), ANTHROPIC_API_KEY=key,
               ANTHROPIC_BASE_URL=server.url, CTXLAB_MODEL="claude-test",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


def files_holding(root: Path, needle: bytes) -> list[Path]:
    found = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink() and needle in path.read_bytes():
                found.append(path)
    return found


def bash(command: str, number: int) -> dict:
    return {"type": "tool_use", "id": f"toolu_env_{number}", "name": "bash",
            "input": {"command": command}}


def test_the_api_key_reaches_no_workspace_file_when_the_model_runs_env(
        tmp_path, messages_server: MessagesServer):
    key = f"sk-ant-api03-{uuid.uuid4().hex}{uuid.uuid4().hex}"
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / ".bashrc").write_text(f"alias ll='ls -l'\nexport ANTHROPIC_API_KEY={key}\n")
    commands = ["env", "printenv ANTHROPIC_API_KEY; echo status=$?", "cat ~/.bashrc",
                "tr '\\0' '\\n' < /proc/$PPID/environ",
                "for i in $(seq 2000); do echo \"row $i\"; cat ~/.bashrc; done"]
    server = messages_server
    server.reply([bash(c, n) for n, c in enumerate(commands)], stop_reason="tool_use")
    server.reply_tool_use("compact", {})
    server.reply_text("SUMMARY of the environment check")
    server.reply_text("Done.")
    server.reply_text("[]")  # the end-of-turn memory extraction

    done = subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--provider", "anthropic", "--json",
         "--workspace", str(workspace), "--session", "s1", "--large-result", "500",
         "--prompt", "Debug the environment: print everything"],
        cwd=REPO, env=child_env(home, server, key), capture_output=True, text=True,
        timeout=120, check=False)

    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    assert events[-1]["type"] == "run_end" and events[-1]["ok"] is True
    assert server.pending == 0
    # the commands did meet the key (else this test could not fail) ...
    results = [block["content"] for request in server.requests_to()
               for message in request.body["messages"] if isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result"]
    seen = "\n".join(str(r) for r in results)
    assert marker("ANTHROPIC_API_KEY") in seen and "PATH=" in seen and "status=1" in seen
    assert "<persisted-output>" in seen  # the long output was spooled and archived
    assert (workspace / ".ctxlab" / "sessions" / "s1" / "session.json").is_file()
    assert list((workspace / ".transcripts").iterdir())
    # ... and it is nowhere: no file of the workspace, no event, no request body
    assert files_holding(workspace, key.encode()) == []
    assert key not in done.stdout and key not in done.stderr
    assert not [r for r in server.requests_to() if key.encode() in r.raw]


def test_a_key_read_from_a_workspace_file_is_redacted_from_history_session_and_archive(
        tmp_path, monkeypatch, messages_server: MessagesServer):
    """Not only bash: a ``read_file`` of a ``.env`` (and a result the budget persists)."""
    token = f"ghp_{uuid.uuid4().hex}"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".env").write_text(f"GITHUB_TOKEN={token}\n" + "FILLER=1\n" * 200)
    server = messages_server
    server.reply_tool_use("read_file", {"path": ".env"})
    server.reply_tool_use("bash", {"command": "grep -c GITHUB .env; false"})
    server.reply_text("Done.")

    ok, recorder = run_prompts(server, workspace, ["show .env"], session="s2", memory=False,
                               thresholds=Thresholds(large_result=500, batch_limit=1000))

    assert ok
    sent = [r for r in server.requests_to() if b"[redacted GITHUB_TOKEN]" in r.raw]
    assert sent and not [r for r in server.requests_to() if token.encode() in r.raw]
    assert files_holding(workspace, token.encode()) == [workspace / ".env"]
    assert token not in json.dumps([e.to_json() for e in recorder.events])



def test_pass_env_gives_one_variable_to_the_tools_with_its_value_still_redacted(
        tmp_path, messages_server: MessagesServer):
    key = f"sk-ant-api03-{uuid.uuid4().hex}"
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    server = messages_server
    server.reply([bash("printenv DEPLOY_TOKEN >/dev/null && echo passed; "
                       "printenv OTHER_TOKEN >/dev/null || echo dropped", 1)],
                 stop_reason="tool_use")
    server.reply_text("Done.")
    server.reply_text("[]")
    env = child_env(home, server, key) | {"DEPLOY_TOKEN": "deploy-" + uuid.uuid4().hex,
                                          "OTHER_TOKEN": "other-" + uuid.uuid4().hex}
    done = subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--provider", "anthropic", "--json",
         "--workspace", str(workspace), "--pass-env", "DEPLOY_TOKEN", "--prompt", "check"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = str(server.requests_to()[1].body["messages"][-1]["content"])
    assert "passed" in result and "dropped" in result


def test_a_pass_env_that_is_no_variable_name_is_one_usage_line():
    done = subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--pass-env", "A B", "--prompt", "x"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "not an environment variable name" in done.stderr and "Traceback" not in done.stderr
