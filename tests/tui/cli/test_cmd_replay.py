"""``ctxlab replay``: the headless log and JSONL, one-line errors, and where it writes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.sources.replay.source import ReplaySource
from tests.core.sources.replay.conftest import CLAUDE, CODEX, FIXTURES
from tests.tui.cli.test_cmd_run import REPO, clean_env
from tui.cli import main


def replay(*args: str) -> int:
    return main(["replay", *args])


def test_json_prints_only_events_in_a_real_process(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tui", "replay", str(CLAUDE), "--headless", "--json",
         "--workdir", str(tmp_path / "w")],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "run_start" and events[0]["provider"] == "replay"
    assert events[1]["type"] == "replay_start" and events[1]["limits"] == "window"
    assert events[-1] == {**events[-1], "type": "run_end", "ok": True, "turns": 6}
    [theirs] = [e for e in events if e["type"] == "stage" and e["by"] == "claude-code"]
    assert theirs["pre_tokens"] == 170251 and theirs["trigger"] == "auto"


def test_the_log_shows_the_agents_compaction_and_the_unit(tmp_path, capsys):
    assert replay(str(CLAUDE), "--headless", "--workdir", str(tmp_path / "w")) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert "claude-code auto-compact at 170,251 tokens" in out
    assert "context limit 200,000 tokens = " in out and "(unit: tokens)" in out
    assert "scaled to the model's 200,000-token window" in out
    assert "subagent transcript:" in out and "agent-3f9c2a1b.jsonl" in out
    assert "request 6/6: original" in out


def test_counts_agree_with_their_nouns_and_a_replay_counts_requests(tmp_path, capsys):
    """The log said "1 compactions", "8 → 1 messages" and ended "after 6 turn(s)", though a
    replay plays recorded requests, not turns."""
    assert replay(str(CLAUDE), "--headless", "--workdir", str(tmp_path / "w")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "6 requests, 1 compaction by claude-code" in out
    assert "8 → 1 message;" in out
    assert out.endswith("replay end: ok after 6 requests")
    assert "(s)" not in out
    assert not re.search(r"\b1 (messages|compactions|requests)", out)


def test_a_token_limit_is_stated_with_its_conversion(tmp_path, capsys):
    assert replay(str(CODEX), "--headless", "--context-limit-tokens", "1000",
                  "--workdir", str(tmp_path / "w")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "context limit 1,000 tokens = 4,000 chars (unit: tokens)" in out


def test_course_limits_are_the_courses_and_exclude_a_token_limit(tmp_path, capsys):
    assert replay(str(CLAUDE), "--headless", "--json", "--course-limits",
                  "--workdir", str(tmp_path / "w")) == 0
    start = next(e for e in map(json.loads, capsys.readouterr().out.splitlines())
                 if e["type"] == "replay_start")
    assert (start["limits"], start["context_limit"], start["max_messages"], start["unit"]) \
        == ("course", 50_000, 50, "chars")
    assert replay(str(CLAUDE), "--headless", "--course-limits", "--context-limit-tokens",
                  "9000", "--workdir", str(tmp_path / "x")) == 2
    assert "not both" in capsys.readouterr().err


def test_the_agents_compactions_show_with_their_own_calls_cost(tmp_path, capsys):
    path = str(FIXTURES / "watch-2.1.197" / "compactions.jsonl")
    assert replay(path, "--headless", "--workdir", str(tmp_path / "w")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "claude-code auto-compact at 190,000 tokens" in out
    assert "claude-code manual-compact at 190,000 tokens" in out
    assert out.count("its own call 1,200 tokens in, 300 out") == 2
    assert "rewrite" not in out and "CRITICAL" not in out


def test_a_watch_recording_lists_its_conversations_and_replays_the_one_asked(tmp_path,
                                                                           capsys):
    path = str(FIXTURES / "watch-2.1.197" / "subagent.jsonl")
    assert replay(path, "--headless", "--workdir", str(tmp_path / "w")) == 0
    out = capsys.readouterr().out
    assert "* conversation 1: 2 requests from line 1  MAIN-TASK" in out
    assert "claude-code" in out and "rewrite" not in out
    assert "conversation 2: 2 requests from line 2  SUBAGENT-TASK" in out
    assert replay(path, "--headless", "--json", "--conversation", "2",
                  "--workdir", str(tmp_path / "x")) == 0
    start = next(e for e in map(json.loads, capsys.readouterr().out.splitlines())
                 if e["type"] == "replay_start")
    assert (start["conversation"], start["requests"]) == ("2", 2)
    assert replay(path, "--headless", "--conversation", "7",
                  "--workdir", str(tmp_path / "y")) == 2
    assert "no conversation '7' (it holds: 1, 2)" in capsys.readouterr().err


def test_without_headless_it_opens_the_workbench_on_the_replay(tmp_path, monkeypatch):
    import tui.cli.cmd_app

    seen = {}

    def launch(config, theme):  # the workbench itself is tested with Pilot
        seen["config"] = config
        return 0

    monkeypatch.setattr(tui.cli.cmd_app, "launch", launch)
    assert replay(str(CODEX), "--workdir", str(tmp_path / "w")) == 0
    config = seen["config"]
    assert config.scenario is None and config.workspace == (tmp_path / "w").resolve()
    assert config.speed == 1.0  # a person watches: one request a second unless --speed
    source = config.source(tmp_path / "w")
    assert isinstance(source, ReplaySource) and source.recording.path == CODEX


def test_the_workbench_replay_gets_a_temporary_folder_unless_workdir(tmp_path, monkeypatch):
    import tui.cli.cmd_app

    seen = {}
    monkeypatch.setattr(tui.cli.cmd_app, "launch",
                        lambda config, theme: seen.setdefault("config", config) and 0)
    assert replay(str(CODEX), "--speed", "0") == 0
    assert seen["config"].workspace is None  # the app makes it, and removes it on exit
    assert seen["config"].speed == 1000.0


def test_the_default_workdir_is_a_fresh_temporary_folder_and_the_session_is_untouched(
        tmp_path, capsys):
    session = tmp_path / "proj" / CLAUDE.name
    session.parent.mkdir()
    shutil.copy(CLAUDE, session)
    assert replay(str(session), "--headless", "--json") == 0
    assert sorted(p.name for p in session.parent.iterdir()) == [CLAUDE.name]
    out, err = capsys.readouterr()
    start = json.loads(out.splitlines()[0])
    assert "ctxlab-replay-" in start["workspace"]
    # it held copies of the session's tool outputs and summaries: removed, and said so
    assert not Path(start["workspace"]).exists()
    assert err == f"ctxlab replay: workspace {start['workspace']} removed (--keep keeps it)\n"


def test_keep_keeps_the_temporary_folder_and_names_it(tmp_path, capsys):
    assert replay(str(CLAUDE), "--headless", "--keep") == 0
    out = capsys.readouterr().out
    kept = out.strip().splitlines()[-1]
    assert kept.startswith("workspace kept: ")
    folder = Path(kept.removeprefix("workspace kept: "))
    assert (folder / ".replay").is_dir()
    shutil.rmtree(folder)


@pytest.mark.parametrize(("args", "message"), [
    (["--context-limit", "9000", "--context-limit-tokens", "100"], "not both"),
    (["--context-limit-tokens", "0"], "must be positive"),
    (["--speed", "-1"], "--speed: must be 0 or more"),
    (["--format", "codex"], "no model request found as codex"),
    (["--max-mb", "0.001"], "replay reads sessions up to 0.001 MB"),
])
def test_bad_flags_and_wrong_formats_exit_2_with_one_line(tmp_path, capsys, args, message):
    assert replay(str(CLAUDE), "--headless", "--workdir", str(tmp_path / "w"), *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("ctxlab replay: ")


def test_bad_files_exit_2_with_one_line(tmp_path, capsys):
    for content in (b"", b"\x00\x01binary", b"a,b\n1,2\n"):
        path = tmp_path / "bad.jsonl"
        path.write_bytes(content)
        assert replay(str(path), "--headless") == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
    assert replay(str(FIXTURES), "--headless") == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_workdir_next_to_the_session_or_full_of_other_files_is_refused(tmp_path, capsys):
    session = tmp_path / "s.jsonl"
    shutil.copy(CLAUDE, session)
    assert replay(str(session), "--headless", "--workdir", str(tmp_path)) == 2
    assert "the session file's own folder" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert replay(str(session), "--headless", "--workdir", str(other)) == 2
    assert "not empty and not a replay folder" in capsys.readouterr().err


def test_a_workdir_whose_replay_folder_is_a_link_is_refused_and_nothing_outside_written(
        tmp_path, capsys):
    """It looks like a previous replay folder, but its ``.replay`` leads outside."""
    outside, work = tmp_path / "outside", tmp_path / "w"
    outside.mkdir()
    work.mkdir()
    (work / ".replay").symlink_to(outside, target_is_directory=True)
    assert replay(str(CLAUDE), "--headless", "--workdir", str(work)) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert list(outside.iterdir()) == []


def test_a_previous_replay_folder_can_be_reused(tmp_path):
    work = tmp_path / "w"
    assert replay(str(CODEX), "--headless", "--json", "--workdir", str(work)) == 0
    assert replay(str(CODEX), "--headless", "--json", "--workdir", str(work)) == 0


def test_malformed_lines_are_in_the_log_with_their_number(tmp_path, capsys):
    rows = CODEX.read_text(encoding="utf-8").splitlines()
    rows[2] = "{oops"
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(rows) + "\n")
    assert replay(str(path), "--headless", "--workdir", str(tmp_path / "w")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "notice (malformed): line 3 is not valid JSON" in out
    assert "read 24 of 25 lines" in out


def test_provider_anthropic_writes_ctxlabs_summaries_with_the_real_sdk(server_env, tmp_path,
                                                                      capsys):
    for _ in range(10):
        server_env.reply_text("Summary: fix the login fixture; the suite passes.")
    assert replay(str(CLAUDE), "--headless", "--json", "--provider", "anthropic",
                  "--context-limit", "1500", "--workdir", str(tmp_path / "w")) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summaries = [e for e in events if e["type"] == "model_request" and e["purpose"] == "summary"]
    assert summaries and len(server_env.requests_to()) == len(summaries)
    stages = [e for e in events if e["type"] == "stage" and e["stage"] == "compact_history"]
    assert stages and all(e["by"] == "ctxlab" for e in stages)


def test_a_failing_real_summary_exits_1_with_its_reason(server_env, tmp_path, capsys):
    server_env.unauthorized()
    assert replay(str(CLAUDE), "--headless", "--provider", "anthropic",
                  "--context-limit", "1500", "--workdir", str(tmp_path / "w")) == 1
    err = capsys.readouterr().err
    assert err.startswith("ctxlab replay: ") and err.count("\n") == 1


def test_keep_without_headless_is_one_usage_line_not_a_folder_silently_removed(
        monkeypatch, capsys):
    """The workbench removes its temporary folder when it closes, so ``--keep`` there kept
    nothing and said nothing; it is refused as ``watch`` refuses ``--keep --headless``."""
    import tui.cli.cmd_app

    opened: list[object] = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch",
                        lambda config, theme: opened.append(config) or 0)
    assert replay(str(CLAUDE), "--keep") == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab replay: --keep") and err.count("\n") == 1, err
    assert not opened


@pytest.mark.parametrize(("argv", "env", "lang"), [
    (["--lang", "zh"], {}, "zh"), ([], {"LANG": "zh_CN.UTF-8"}, "zh"),
    (["--lang", "en"], {"LANG": "zh_CN.UTF-8"}, "en"), ([], {"LC_ALL": "C"}, "en")])
def test_the_replay_workbench_speaks_the_language_asked_for(monkeypatch, tmp_path, argv, env,
                                                            lang):
    """``ctxlab --lang zh replay PATH`` (or a Chinese locale) opened an English workbench."""
    import tui.cli.cmd_app

    opened = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch", lambda config, theme: opened.append(config) or 0)
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main([*argv, "replay", str(CLAUDE), "--workdir", str(tmp_path / "w")]) == 0
    (config,) = opened
    assert config.lang == lang
