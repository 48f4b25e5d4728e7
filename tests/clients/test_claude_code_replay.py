"""``ctxlab replay`` of what the real Claude Code CLI wrote: its transcripts and the watch's
recording of the same sessions (tests/support/claude_code_session.py).

The replay must hold every tool call (the parallel ones too), find exactly Claude Code's two
compactions, and show after each the history Claude Code really sent next.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.events import event_from_json
from core.sources.replay import load_recording
from core.sources.replay.original import as_sent
from tests.support.claude_code import SUMMARY_ASK, last_user_text
from tests.support.claude_code_session import SUBAGENT, Recorded
from tui.why import recorded_why

REPO = Path(__file__).resolve().parents[2]


def replay_json(path: Path, workdir: Path, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "tui", "replay", str(path), "--headless", "--json",
         "--workdir", str(workdir), *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def recorded_stages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "stage" and e["by"] != "ctxlab"]


def tool_ids(messages: list[dict[str, Any]], kind: str) -> list[str]:
    key = "id" if kind == "tool_use" else "tool_use_id"
    return [b[key] for m in messages if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == kind]


def shape(messages: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """Roles and the tool calls and results each message carries, in order."""
    return [(m["role"], tuple(tool_ids([m], "tool_use") + tool_ids([m], "tool_result")))
            for m in messages]


def main_requests(claude: Recorded, session: str) -> list[list[dict[str, Any]]]:
    """The message lists Claude Code sent for ``session``'s own conversation (not its
    summary calls, not a subagent's)."""
    return [body["messages"] for body in claude.sent(session)
            if SUMMARY_ASK not in last_user_text(body["messages"])
            and SUBAGENT not in json.dumps(body["messages"][0])]


def histories(path: Path) -> list[list[dict[str, Any]]]:
    """The original's history before each of its requests, as the replay rebuilds it."""
    return [list(history.messages) for _, history in as_sent(load_recording(path))]


def test_the_transcript_holds_every_tool_call_and_both_compactions(claude: Recorded,
                                                                  tmp_path: Path):
    session = claude.runs[0].session_id
    events = replay_json(claude.transcript(session), tmp_path / "w")
    start = next(e for e in events if e["type"] == "replay_start")
    assert start["compactions"] == 2
    stages = recorded_stages(events)
    assert [(s["stage"], s["trigger"]) for s in stages] == [
        ("auto_compact", "auto"), ("manual_compact", "manual")]
    assert events[-1]["type"] == "run_end" and events[-1]["ok"]
    # the workbench says what Claude Code did, never ctxlab's "the model called the compact tool"
    auto, manual = (recorded_why(event_from_json(s)) for s in stages)
    assert "automatically" in auto and "/compact" in manual
    assert "compact tool" not in auto + manual


def test_the_original_history_is_what_claude_code_sent(claude: Recorded):
    session = claude.runs[0].session_id
    sent = main_requests(claude, session)
    rebuilt = histories(claude.transcript(session))
    assert len(rebuilt) == len(sent)
    for ours, theirs in zip(rebuilt, sent, strict=True):
        assert shape(ours) == shape(theirs)
    everything = [m for history in rebuilt for m in history]
    assert len(set(tool_ids(everything, "tool_use"))) == 3  # ids repeat per task
    assert tool_ids(rebuilt[-1], "tool_use") == tool_ids(sent[-1], "tool_use")
    assert tool_ids(rebuilt[-1], "tool_result") == tool_ids(sent[-1], "tool_result")


def test_an_interleaved_recording_replays_one_conversation(claude: Recorded, tmp_path: Path):
    events = replay_json(claude.recording, tmp_path / "w")
    stages = recorded_stages(events)
    assert len(stages) == 2, [(s["stage"], s.get("trigger")) for s in stages]
    turns = [e["request"] for e in events if e["type"] == "turn_start"]
    assert turns and not any(SUMMARY_ASK in t for t in turns)  # the summary call is no turn
    steps = [e for e in events if e["type"] == "replay_step"]
    session = claude.runs[0].session_id
    assert len(steps) == len(main_requests(claude, session))


def test_the_subagent_is_listed_attributed_and_replays(claude: Recorded, tmp_path: Path):
    session = claude.runs[-1].session_id
    [agent] = claude.subagents(session)
    events = replay_json(claude.transcript(session), tmp_path / "w", "--with-subagents")
    start = next(e for e in events if e["type"] == "replay_start")
    assert [Path(p).name for p in start["subagents"]] == [agent.name]
    [totals] = start["subagent_totals"]
    assert totals["agent_type"] == "general-purpose" and totals["tool_use_id"] == "toolu_09task"
    assert totals["requests"] == 2 and totals["input_tokens"] == 900 + 1_200
    own = replay_json(agent, tmp_path / "sub")
    assert next(e for e in own if e["type"] == "replay_start")["requests"] == 2


def test_no_record_type_claude_code_wrote_is_unknown(claude: Recorded):
    sessions = {run.session_id for run in claude.runs}
    assert claude.interactive is not None
    files = [claude.transcript(s) for s in sessions] + [claude.interactive]
    files += [a for s in sessions for a in claude.subagents(s)]
    for path in files:
        skipped = load_recording(path).skipped
        assert not [kind for kind in skipped if kind.startswith("unknown")], (path, skipped)


def test_an_interactive_transcript_is_detected_and_replays_whole(claude: Recorded,
                                                                tmp_path: Path):
    """The terminal UI's transcript starts with ai-title, mode and permission-mode records,
    and writes some records before the parent they point to."""
    assert claude.interactive is not None
    first = json.loads(claude.interactive.read_text().splitlines()[0])
    assert first["type"] in ("ai-title", "mode", "permission-mode")
    events = replay_json(claude.interactive, tmp_path / "w")
    start = next(e for e in events if e["type"] == "replay_start")
    assert start["format"] == "claude-code" and start["requests"] == 3
    assert not [e for e in events if e["type"] == "replay_notice" and "unknown" in e["kind"]]
    rebuilt = histories(claude.interactive)
    assert tool_ids(rebuilt[-1], "tool_use") == ["toolu_01read", "toolu_02bash", "toolu_03bash"]
    assert tool_ids(rebuilt[-1], "tool_result") == tool_ids(rebuilt[-1], "tool_use")
