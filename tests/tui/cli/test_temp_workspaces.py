"""Temporary workspaces never outlive their process: SIGHUP, SIGTERM, and ``run --headless``.

The workbench test runs the real ``ctxlab demo`` on a pseudo-terminal this test opens (no
TTY is needed from the environment), with ``TMPDIR`` pointing at the test's directory, and
closes "the terminal" the way a terminal emulator does: SIGHUP.
"""

from __future__ import annotations

import contextlib
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.tui.cli.test_cmd_run import REPO, clean_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and ptys")
TIMEOUT = 30.0


def workspaces(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("ctxlab-*"))


def wait_for(predicate, timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def drain(fd: int) -> None:
    """Read the terminal's output so the app never blocks writing to it."""
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_closing_the_terminal_removes_the_demo_workspace(tmp_path, sig):
    master, slave = pty.openpty()
    env = {**clean_env(), "TMPDIR": str(tmp_path), "TERM": "xterm-256color",
           "COLUMNS": "120", "LINES": "40"}
    process = subprocess.Popen([sys.executable, "-m", "tui", "demo", "--paused"], cwd=REPO,
                               env=env, stdin=slave, stdout=slave, stderr=slave,
                               start_new_session=True)
    os.close(slave)
    threading.Thread(target=drain, args=(master,), daemon=True).start()
    try:
        assert wait_for(lambda: workspaces(tmp_path)), "the demo made its workspace"
        assert (workspaces(tmp_path)[0]).name.startswith("ctxlab-refactor-auth-")
        time.sleep(1.0)  # the app is up and drawing
        process.send_signal(sig)
        code = process.wait(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert code == -sig, "the process still ends as that signal ends it"
    assert workspaces(tmp_path) == []


def run_headless(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**clean_env(), "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "tui", "run", "--headless", "--scenario",
                           "big-log", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_run_headless_removes_its_temporary_workspace_and_says_where_it_was(tmp_path):
    done = run_headless(tmp_path)
    assert done.returncode == 0, done.stderr
    assert workspaces(tmp_path) == []
    assert f"{tmp_path}/ctxlab-" in done.stdout
    assert "removed" in done.stdout.splitlines()[-1] and "--keep" in done.stdout.splitlines()[-1]


def test_run_headless_json_says_it_on_stderr_and_keeps_stdout_json(tmp_path):
    done = run_headless(tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    assert workspaces(tmp_path) == []
    assert all(line.startswith("{") for line in done.stdout.splitlines())
    assert f"{tmp_path}/ctxlab-" in done.stderr and "removed" in done.stderr


def test_keep_keeps_it_and_prints_its_full_path(tmp_path):
    done = run_headless(tmp_path, "--keep")
    assert done.returncode == 0, done.stderr
    [kept] = workspaces(tmp_path)
    assert (kept / "logs").is_dir()
    assert f"workspace kept: {kept}" in done.stdout


def test_a_named_workspace_is_never_removed(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    done = run_headless(tmp_path, "--workspace", str(mine))
    assert done.returncode == 0, done.stderr
    assert (mine / "logs").is_dir() and "removed" not in done.stdout


SLOW = """name: slow
title: One long command
workspace: long_chat
sessions:
  - turns:
      - user: Wait.
        replies:
          - tools:
              - bash: {command: "sleep 5"}
          - say: Waited.
"""


def test_a_killed_headless_run_removes_its_temporary_workspace(tmp_path):
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW, encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "run", "--headless", "--scenario", str(scenario)],
        cwd=REPO, env={**clean_env(), "TMPDIR": str(temp)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: workspaces(temp))
        time.sleep(1.0)  # generated and into the long command
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == -signal.SIGTERM
    assert workspaces(temp) == []
