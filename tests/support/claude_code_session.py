"""Two real Claude Code sessions, watched: what the real-client tests look at.

:func:`record` runs the pinned CLI in print mode through ``ctxlab watch`` in front of the
scripted Messages server, all in one folder:

* session A — a task with two parallel tool calls (Read and Bash), one more Bash call, then
  an answer whose usage puts the context over Claude Code's auto-compact threshold; a second
  prompt on ``--resume`` (Claude Code compacts automatically first); ``/compact`` (the manual
  compaction); a last prompt;
* session B — a task delegated to a general-purpose subagent (the Task tool), which reads a
  file itself;
* session C — session A's task typed into the CLI's interactive terminal UI
  (tests/support/claude_code_tty.py), whose transcript has a shape of its own.

Claude Code really executes every tool call, writes its transcripts under its own ``HOME``,
and the watch writes its recording; the tests then read all of it, and replay it. The runs
take the CLI's default model, as a user's do: a session's first run then describes it as
"Opus 4.8 (1M context)" in the system prompt and a resumed run as "Opus 4.8".
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.events import Event, WatchRequest, WatchResponse
from tests.support.claude_code import ClaudeCodeModel, Turn, claude_binary, claude_env
from tests.support.claude_code_tty import record_interactive
from tests.support.messages_server import MESSAGES, MessagesServer, RecordedRequest
from tests.support.npm_clients import CliRun, run_cli
from tests.support.watching import RunningWatch

# Claude Code compacts when the last reply's usage nears this window (less its buffer); the
# scripted answer that ends a task reports more than that.
WINDOW = "200000"
OVER_THRESHOLD = 190_000
DELEGATE = "DELEGATE:"
SUBAGENT = "SUBAGENT-TASK:"
TOOLS = ["Bash", "Read", "Task"]


def count_task(work: Path) -> list[Turn]:
    """Read notes.txt and count other.txt in parallel, then one more command, then answer."""
    return [
        Turn([{"type": "thinking", "thinking": "Both files at once.", "signature": "c2ln"},
              {"type": "text", "text": "Reading both files."},
              {"type": "tool_use", "id": "toolu_01read", "name": "Read",
               "input": {"file_path": str(work / "notes.txt")}},
              {"type": "tool_use", "id": "toolu_02bash", "name": "Bash",
               "input": {"command": "wc -l other.txt", "description": "Count lines"}}], 3_000),
        Turn([{"type": "tool_use", "id": "toolu_03bash", "name": "Bash",
               "input": {"command": "echo counted", "description": "Say done"}}], 5_000),
        Turn([{"type": "text", "text": "notes.txt has 3 lines."}], OVER_THRESHOLD),
    ]


def delegate_task() -> list[Turn]:
    task = {"description": "Count lines", "prompt": f"{SUBAGENT} count the lines of notes.txt",
            "subagent_type": "general-purpose"}
    return [Turn([{"type": "text", "text": "Delegating."},
                  {"type": "tool_use", "id": "toolu_09task", "name": "Task", "input": task}],
                 4_000),
            Turn([{"type": "text", "text": "The subagent counted 3 lines."}], 6_000)]


def subagent_task(work: Path) -> list[Turn]:
    return [Turn([{"type": "tool_use", "id": "toolu_sub1", "name": "Read",
                   "input": {"file_path": str(work / "notes.txt")}}], 900),
            Turn([{"type": "text", "text": "notes.txt has 3 lines."}], 1_200)]


class Run(CliRun):
    @property
    def session_id(self) -> str:
        return self.first("session_id")


@dataclass
class Recorded:
    """Everything one :func:`record` left behind."""

    home: Path
    work: Path
    root: Path
    runs: list[Run] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    seconds: float = 0.0
    interactive: Path | None = None  # session C's transcript (the CLI's terminal UI)

    @property
    def recording(self) -> Path:
        [path] = (self.root / ".ctxlab" / "watch").glob("*.jsonl")
        return path

    def transcript(self, session_id: str) -> Path:
        [path] = (self.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")
        return path

    def subagents(self, session_id: str) -> list[Path]:
        return sorted(self.transcript(session_id).with_suffix("").glob("subagents/*.jsonl"))

    def sent(self, session_id: str) -> list[dict[str, Any]]:
        """The Messages bodies Claude Code sent for one session, in order."""
        return [r.body for r in self.requests if r.path == MESSAGES
                and r.headers.get("x-claude-code-session-id") == session_id]


def record(base: Path, *, watched: bool = True) -> Recorded:
    """Run both sessions through a watch (or, ``watched=False``, straight to the scripted
    server, for the bench's baseline); see the module docstring."""
    home, work, root = base / "home", base / "work", base / "root"
    for folder in (home, work, root):
        folder.mkdir(parents=True)
    (work / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (work / "other.txt").write_text("one\ntwo\n")
    model = ClaudeCodeModel(count_task(work), tasks={SUBAGENT: subagent_task(work),
                                                     DELEGATE: delegate_task()})
    claude = str(claude_binary())
    out = Recorded(home, work, root)
    started = time.monotonic()
    with MessagesServer() as server:
        server.responder = model
        watch = RunningWatch(server.url, root) if watched else None
        with watch or contextlib.nullcontext():
            url = watch.url if watch else server.url

            def run(*args: str) -> Run:
                return _run(claude, args, work, claude_env(
                    home, url, CLAUDE_CODE_AUTO_COMPACT_WINDOW=WINDOW))

            first = run("Read notes.txt and count the lines of other.txt")
            session = first.session_id
            out.runs += [first, run("Now say what the first line was", "--resume", session),
                         run("/compact", "--resume", session),
                         run("And the last line?", "--resume", session),
                         run(f"{DELEGATE} have a subagent count notes.txt")]
            out.interactive = record_interactive(
                base / "home-tty", work, url, "Read notes.txt and count the lines of other.txt",
                "notes.txt has 3 lines.")
            if watch is not None:
                watch.wait_for(lambda w: _answered(w) >= len(server.requests_to()))
                out.events = list(watch.events)
        out.requests = list(server.requests)
    out.calls, out.seconds = model.calls, time.monotonic() - started
    return out


def _answered(watch: RunningWatch) -> int:
    """Messages calls the watch has seen answered (events arrive just after the client's)."""
    calls = {e.id for e in watch.of(WatchRequest) if e.path.endswith(MESSAGES)}
    return sum(1 for e in watch.of(WatchResponse) if e.id in calls)


def _run(claude: str, args: tuple[str, ...], work: Path, env: dict[str, str]) -> Run:
    return run_cli([claude, "-p", *args, "--output-format", "stream-json", "--verbose",
                    "--allowedTools", *TOOLS], args, work, env, Run)
