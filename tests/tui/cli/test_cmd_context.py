"""``ctxlab context``: the window table and its JSON for a scenario, a replayed file, a
watch recording and a saved session, with the events' own figures; bad input is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core import events as ev
from tests.core.sources.replay.conftest import CLAUDE, FIXTURES
from tests.core.views.test_requests import headless
from tui.cli import main

WATCH = FIXTURES / "watch-2.1.197" / "compactions.jsonl"


def context(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["context", *args])
    out, err = capsys.readouterr()
    return code, out, err


def windows(capsys, *args: str) -> list[dict]:
    code, out, err = context(capsys, *args, "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def adds_up(window: dict) -> None:
    assert sum(p["tokens"] for p in window["parts"]) == window["tokens"]
    assert window["tokens"] + window["free_tokens"] == \
        window["window_tokens"] + window["over_tokens"]


def test_a_scenarios_last_request_with_the_runs_own_figures(capsys):
    events = headless("run", "--headless", "--scenario", "long-chat")
    mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
    [window] = windows(capsys, "long-chat")
    adds_up(window)
    assert (window["side"], window["index"]) == ("ctxlab", len(mains))
    assert window["tokens"] == mains[-1].est_tokens  # scripted: no API count
    assert {p["category"]: p["chars"] for p in window["parts"]} == \
        {k: v for k, v in mains[-1].breakdown.items() if v}
    assert {m["kind"] for m in window["marks"]} == {"trigger", "target"}
    code, out, _ = context(capsys, "long-chat", "--at", "2")
    assert code == 0
    assert out.splitlines()[0].startswith("ctxlab · request 2 · ")
    assert "in context (estimated)" in out and "ctxlab's trigger (configured)" in out


def test_a_replayed_session_shows_the_original_above_ctxlabs(capsys):
    events = headless("replay", str(CLAUDE), "--headless")
    steps = [e for e in events if isinstance(e, ev.ReplayStep)]
    theirs, ours = windows(capsys, str(CLAUDE))
    assert (theirs["side"], ours["side"]) == ("original", "ctxlab")
    for window in (theirs, ours):
        adds_up(window)
        assert window["index"] == steps[-1].index
    assert theirs["tokens"] == steps[-1].original_tokens and theirs["counted"]
    [auto] = theirs["marks"]
    assert (auto["kind"], auto["tokens"], auto["source"]) == ("auto_compact", 170_251,
                                                             "recorded")
    assert theirs["buffer_source"] == "derived"
    code, out, _ = context(capsys, str(CLAUDE), "--side", "original", "--at", "3")
    assert code == 0
    assert out.startswith("original · request 3 · ") and "auto-compacted at (recorded)" in out


def test_a_watch_recording_and_a_saved_session(capsys, tmp_path):
    for window in windows(capsys, str(WATCH)):
        adds_up(window)
    workspace = tmp_path / "ws"
    assert main(["run", "--headless", "--scenario", "long-chat", "--session", "s1",
                 "--workspace", str(workspace)]) == 0
    capsys.readouterr()
    saved = workspace / ".ctxlab" / "sessions" / "s1" / "session.json"
    for window in windows(capsys, str(saved)):
        adds_up(window)


@pytest.mark.parametrize(("args", "says"), [
    (["no-such-thing"], "no such file, and no scenario 'no-such-thing'"),
    (["long-chat", "--at", "999"], "no request 999 (requests 1–"),
    (["long-chat", "--at", "0"], "--at: must be 1 or more"),
    (["long-chat", "--side", "original"], "no model request of side original"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, says):
    code, out, err = context(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("ctxlab context: ") and says in err and err.count("\n") == 1


def test_a_file_that_cannot_be_replayed_is_one_line(capsys, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("this is not a session\n", encoding="utf-8")
    code, out, err = context(capsys, str(bad))
    assert code == 2 and out == "" and err.startswith("ctxlab context: ")
    assert err.count("\n") == 1


def test_an_event_log_of_a_scenario_run_gives_the_scenarios_window_and_marks(capsys, tmp_path):
    """No event states ctxlab's thresholds: a log of a scenario's run takes the scenario's
    (before, its window was the request itself: 100% full, no trigger)."""
    log = tmp_path / "run.jsonl"
    log.write_text(subprocess.run(
        [sys.executable, "-m", "tui", "run", "--headless", "--scenario", "refactor-auth",
         "--json"], check=True, capture_output=True, text=True).stdout, encoding="utf-8")
    [from_log] = windows(capsys, str(log))
    [from_name] = windows(capsys, "refactor-auth")
    assert from_log["marks"] == from_name["marks"] and from_log["marks"]
    assert from_log["window_tokens"] == from_name["window_tokens"] > from_log["tokens"]
