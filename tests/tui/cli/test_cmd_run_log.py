"""The readable headless log: LOST entries are shown, and a pipe gets whole lines."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.tui.cli.test_cmd_run import REPO, clean_env, headless


def test_every_lost_ledger_entry_is_a_lost_line_in_the_readable_log(tmp_path, capsys):
    broken = ("--scenario", "refactor-auth", "--break", "persist-before-placeholder")
    headless(*broken, "--workspace", str(tmp_path / "a"), "--json")
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    lost = [entry for e in events if e["type"] == "stage" for entry in e["ledger"]
            if entry["where"] == "lost"]
    assert lost, "the break loses tool output"
    headless(*broken, "--workspace", str(tmp_path / "b"))
    lines = [line for line in capsys.readouterr().out.splitlines() if "LOST" in line]
    assert len(lines) == len(lost)
    first = lost[0]
    assert any(first["tool_use_id"] in line and f"{first['chars']:,} chars" in line
               and first["stage"] in line for line in lines)


def test_a_piped_log_is_not_hard_wrapped_at_80_columns(tmp_path):
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "workspace"
    deep.mkdir(parents=True)
    env = {k: v for k, v in clean_env().items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run([sys.executable, "-m", "tui", "run", "--headless", "--scenario",
                           "big-log", "--workspace", str(deep)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    start = next(line for line in done.stdout.splitlines() if "run start:" in line)
    assert start.endswith(f"in {deep} (scenario big-log)") and len(start) > 120


def test_the_readable_log_marks_where_each_session_starts(tmp_path, capsys):
    assert headless("--scenario", "two-sessions", "--workspace", str(tmp_path)) == 0
    lines = capsys.readouterr().out.splitlines()
    marks = [i for i, line in enumerate(lines) if "── session" in line]
    assert [lines[i].split("] ", 1)[1] for i in marks] == ["── session 1 of 2 ──",
                                                           "── session 2 of 2 ──"]
    assert "user: Create a new module" in lines[marks[1] + 1]
