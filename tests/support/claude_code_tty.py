"""The real Claude Code CLI in its interactive mode, on a pseudo-terminal.

Interactive sessions write a transcript that print mode does not: it starts with ``ai-title``,
``mode`` and ``permission-mode`` records, and records can come before the parent they point
to. :func:`record_interactive` types one prompt into the CLI's terminal UI (its first-run
questions answered in its own config: onboarding done, the folder trusted, the dummy key
approved), waits for the answer to reach the transcript, then exits with ``/exit``.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import time
from pathlib import Path

from tests.support.claude_code import claude_binary, claude_env

KEY = "sk-ant-test-not-a-key"  # what claude_env sets; approved below by its last 20 chars
PROMPT_MARK = "❯".encode()


def seed_config(home: Path, work: Path, tools: list[str]) -> None:
    """The answers to the CLI's first-run questions, where it keeps them."""
    config = {"hasCompletedOnboarding": True, "theme": "dark",
              "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
              "projects": {str(work): {"hasTrustDialogAccepted": True, "allowedTools": tools}}}
    (home / ".claude.json").write_text(json.dumps(config))


class Terminal:
    """The CLI on a pseudo-terminal: type into it, read what it drew."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the CLI
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.screen = b""

    def read(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    self.screen += os.read(self.fd, 65536)
                except OSError:  # the CLI exited
                    return

    def wait_for(self, mark: bytes, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while mark not in self.screen and time.monotonic() < end:
            self.read(0.1)
        return mark in self.screen

    def type(self, text: str) -> None:
        """One key at a time, as a person types (a pasted burst is handled differently)."""
        for char in text.encode():
            os.write(self.fd, bytes([char]))
            self.read(0.005)
        self.read(0.3)
        os.write(self.fd, b"\r")

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def record_interactive(home: Path, work: Path, base_url: str, prompt: str, answer: str,
                       timeout: float = 60.0) -> Path:
    """Type ``prompt`` into an interactive session; return its transcript once ``answer``
    (the scripted model's last words) is in it."""
    tools = ["Bash", "Read"]
    home.mkdir(parents=True, exist_ok=True)
    seed_config(home, work, tools)
    env = claude_env(home, base_url, TERM="xterm-256color", COLUMNS="120", LINES="40")
    terminal = Terminal([str(claude_binary()), "--allowedTools", *tools], work, env)
    try:
        if not terminal.wait_for(PROMPT_MARK, timeout):
            raise AssertionError(f"the CLI never showed its prompt: {terminal.screen[-500:]!r}")
        terminal.read(1.0)
        terminal.type(prompt)
        transcript = _wait_for_answer(home, answer, terminal, timeout)
        terminal.type("/exit")
        terminal.read(1.0)
        return transcript
    finally:
        terminal.close()


def _wait_for_answer(home: Path, answer: str, terminal: Terminal, timeout: float) -> Path:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for path in (home / ".claude" / "projects").glob("*/*.jsonl"):
            if answer in path.read_text(errors="replace"):
                return path
        terminal.read(0.2)
    raise AssertionError(f"no transcript with {answer!r}: {terminal.screen[-500:]!r}")
