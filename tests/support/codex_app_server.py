"""Manual compaction of a Codex thread, the way an IDE asks for it: ``codex app-server``.

In ``codex exec`` a "/compact" prompt is plain text; the command itself exists only in the
interactive clients, which all speak the app server's JSON-RPC over stdio. So a test resumes
the thread there and sends ``thread/compact/start``, then waits until the server says the
compaction turn has finished.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import IO, Any


class AppServer:
    """``codex app-server`` on pipes; one JSON object per line each way."""

    def __init__(self, binary: Path, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen([str(binary), "app-server"], cwd=cwd, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        self.seen: list[dict[str, Any]] = []
        self._ids = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *,
             notify: bool = False) -> int:
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self._ids += 1
            message["id"] = self._ids
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()
        return self._ids

    def wait_for(self, done: Any, timeout: float = 60.0) -> dict[str, Any]:
        """Read messages until ``done(message)``; a JSON-RPC error for a request fails."""
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"codex app-server exited: {self.seen[-3:]}")
            message = json.loads(line)
            self.seen.append(message)
            if "error" in message and "id" in message:
                raise RuntimeError(f"codex app-server refused: {message['error']}")
            if done(message):
                return message
        raise TimeoutError(f"codex app-server: no answer in {timeout} s: {self.seen[-3:]}")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = self.send(method, params)
        return self.wait_for(lambda m: m.get("id") == ident and "result" in m)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def compact_thread(binary: Path, cwd: Path, env: dict[str, str], thread_id: str) -> list[
        dict[str, Any]]:
    """Resume ``thread_id`` and compact it by hand; the server's messages, for the record."""
    server = AppServer(binary, cwd, env)
    try:
        server.request("initialize", {"clientInfo": {"name": "ctxlab-tests", "version": "1"}})
        server.send("initialized", notify=True)
        server.request("thread/resume", {"threadId": thread_id})
        server.request("thread/compact/start", {"threadId": thread_id})
        server.wait_for(lambda m: m.get("method") == "turn/completed")
    finally:
        server.close()
    return server.seen
