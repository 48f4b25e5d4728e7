"""Two real Codex sessions, watched: what the Codex real-client tests look at.

:func:`record` runs the pinned CLI (``codex exec``) through ``ctxlab watch`` in front of the
scripted Responses server, each session with its own ``CODEX_HOME``:

* session L — a custom provider, so Codex compacts *locally*: a task with two parallel
  ``exec_command`` calls, then an ``apply_patch`` call whose reported usage passes
  ``model_auto_compact_token_limit``, so Codex compacts in the middle of the turn (a
  checkpoint summary call) and goes on; a second prompt on ``exec resume``; a manual
  compaction through ``codex app-server`` (``thread/compact/start``); a last prompt;
* session R — the built-in OpenAI provider pointed at the watch, so Codex compacts
  *remotely*: the same task, and the compaction is a ``compaction_trigger`` input item
  answered by one opaque ``compaction`` item.

Codex really executes every command and patch, writes its rollouts under its
``CODEX_HOME/sessions``, and the watch writes its recording; the tests read all of it, and
replay it.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.events import Event, WatchRequest, WatchResponse
from tests.support.codex import (
    CodexModel,
    Turn,
    codex_binary,
    codex_env,
    exec_command,
    write_config,
)
from tests.support.codex_app_server import compact_thread
from tests.support.messages_server import RecordedRequest
from tests.support.npm_clients import CliRun, run_cli
from tests.support.openai_server import RESPONSES, OpenAIServer
from tests.support.openai_wire import custom_tool_call_item
from tests.support.watching import RunningWatch

MODEL = "gpt-5.5"  # a model Codex knows: it offers apply_patch as a freeform tool
AUTO_COMPACT = 10_000  # model_auto_compact_token_limit; the patch turn reports more
OVER_THRESHOLD = 20_000
TASK = "Count the lines of notes.txt"
PATCH = "*** Begin Patch\n*** Add File: count.txt\n+3\n*** End Patch\n"


def count_task() -> list[Turn]:
    """Read and count notes.txt in parallel, then write the count with a patch."""
    return [Turn([exec_command("cat notes.txt", "call_cat"),
                  exec_command("wc -l notes.txt", "call_wc")], input_tokens=4_000),
            Turn([custom_tool_call_item("apply_patch", PATCH, "call_patch")],
                 input_tokens=OVER_THRESHOLD)]


class Run(CliRun):
    @property
    def thread_id(self) -> str:
        return self.first("thread_id")


@dataclass
class Session:
    """One Codex thread: its home, its runs, its rollout."""

    home: Path
    runs: list[Run] = field(default_factory=list)
    app_server: list[dict[str, Any]] = field(default_factory=list)

    @property
    def thread_id(self) -> str:
        return self.runs[0].thread_id

    @property
    def rollout(self) -> Path:
        [path] = (self.home / ".codex" / "sessions").glob(f"**/rollout-*-{self.thread_id}.jsonl")
        return path


@dataclass
class Recorded:
    """Everything one :func:`record` left behind."""

    work: Path
    root: Path
    local: Session
    remote: Session
    requests: list[RecordedRequest] = field(default_factory=list)
    answers: list[tuple[RecordedRequest, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def recording(self) -> Path:
        [path] = (self.root / ".ctxlab" / "watch").glob("*.jsonl")
        return path

    @property
    def responses_calls(self) -> list[RecordedRequest]:
        """The Responses calls Codex made, in order (one at a time)."""
        return [r for r in self.requests if r.path == RESPONSES]

    def usage_of(self, request: RecordedRequest) -> dict[str, Any]:
        """The usage the scripted server reported for ``request``."""
        step = next(step for sent, step in self.answers if sent is request)
        return dict(step.usage)


def record(base: Path, *, watched: bool = True) -> Recorded:
    """Run both sessions through a watch (or, ``watched=False``, straight to the scripted
    server); see the module docstring."""
    work, root = base / "work", base / "root"
    for folder in (work, root):
        folder.mkdir(parents=True)
    (work / "notes.txt").write_text("one\ntwo\nthree\n")
    out = Recorded(work, root, Session(base / "home-local"), Session(base / "home-remote"))
    model = CodexModel(tasks={"notes.txt": count_task()}, done="notes.txt has 3 lines.")
    codex = codex_binary()
    started = time.monotonic()
    with OpenAIServer(model) as server:
        watch = RunningWatch(server.origin, root) if watched else None
        with watch or contextlib.nullcontext():
            url = f"{watch.url}/v1" if watch else server.url
            _local(codex, out.local, work, url)
            _remote(codex, out.remote, work, url)
            if watch is not None:
                watch.wait_for(lambda w: _answered(w) >= len(server.requests_to()))
                out.events = list(watch.events)
        out.requests, out.answers = list(server.requests), list(server.answers)
    out.seconds = time.monotonic() - started
    return out


def _local(codex: Path, session: Session, work: Path, url: str) -> None:
    write_config(session.home, url, model=MODEL, auto_compact=AUTO_COMPACT)
    env = codex_env(session.home)
    first = _run(codex, (TASK,), work, env)
    session.runs.append(first)
    session.runs.append(_run(codex, ("resume", first.thread_id, "What was the first line?"),
                             work, env))
    session.app_server = compact_thread(codex, work, env, first.thread_id)
    session.runs.append(_run(codex, ("resume", first.thread_id, "And the last line?"),
                             work, env))


def _remote(codex: Path, session: Session, work: Path, url: str) -> None:
    write_config(session.home, url, provider="openai", model=MODEL, auto_compact=AUTO_COMPACT)
    env = codex_env(session.home)
    # The built-in provider sends the key a user logged in with, not OPENAI_API_KEY.
    subprocess.run([str(codex), "login", "--with-api-key"], input=env["OPENAI_API_KEY"],
                   env=env, capture_output=True, text=True, timeout=60, check=True)
    session.runs.append(_run(codex, (TASK,), work, env))


def _answered(watch: RunningWatch) -> int:
    """Responses calls the watch has seen answered (events arrive just after the client's)."""
    calls = {e.id for e in watch.of(WatchRequest) if e.path.endswith(RESPONSES)}
    return sum(1 for e in watch.of(WatchResponse) if e.id in calls)


def _run(codex: Path, args: tuple[str, ...], work: Path, env: dict[str, str]) -> Run:
    return run_cli([str(codex), "exec", "--skip-git-repo-check", "--json", *args], args,
                   work, env, Run)
