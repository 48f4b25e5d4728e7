"""A saved session's folder and files: never written through a link, read as untrusted.

``.ctxlab``, ``.ctxlab/sessions``, the session's folder, ``session.json`` and
``worklog.json`` can each arrive as a link (a cloned repository can ship them). A run that
would save there refuses with one line and exit 2 before anything is written, and nothing
outside the workspace changes. Reading a session back (``--resume``) takes a file ctxlab did
not necessarily write: a FIFO, ``/dev/zero``, a file of gigabytes, JSON nested past any
message, or fields of the wrong type are one line naming the file, exit 2, no traceback, no
hang and no model call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.reliability.test_planted_links import snapshot
from tui.cli import main

SESSION = Path(".ctxlab") / "sessions" / "s1"
GOOD = {"version": 1, "turns": 1,
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
LINKED = [".ctxlab", ".ctxlab/sessions", ".ctxlab/sessions/s1",
          ".ctxlab/sessions/s1/session.json", ".ctxlab/sessions/s1/worklog.json"]


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = err.splitlines()
    return line


@pytest.mark.parametrize("where", LINKED)
@pytest.mark.parametrize("flag", ["--session", "--resume"])
def test_a_linked_session_folder_or_file_is_one_line_exit_2_and_nothing_outside_changes(
        tmp_path, capsys, server_env, where, flag):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    folder = ws / SESSION
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps(GOOD))
    real = outside / "target"
    link = ws / where
    os.replace(link, real) if link.exists() else real.mkdir()
    link.symlink_to(real, target_is_directory=real.is_dir())
    before = snapshot(outside)
    code = main(["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
                 str(ws), "--prompt", "next", flag, "s1"])
    line = one_line(capsys)
    assert code == 2, line
    assert "symbolic link" in line and str(link.name) in line, line
    assert snapshot(outside) == before
    assert server_env.requests == []  # refused before any model call


def test_a_linked_ctxlab_folder_stops_a_scenario_run_before_it_writes(tmp_path, capsys):
    """A run without --session saves its work log too (under ``sessions/default``)."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / ".ctxlab").symlink_to(outside, target_is_directory=True)
    code = main(["run", "--headless", "--scenario", "refactor-auth", "--json",
                 "--workspace", str(ws)])
    line = one_line(capsys)
    assert code == 2 and ".ctxlab" in line and "symbolic link" in line, line
    assert list(outside.iterdir()) == []


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def _dev_zero(path: Path) -> None:
    try:
        os.mknod(path, 0o600 | 0o020000, os.makedev(1, 5))  # a character device, /dev/zero's
    except (OSError, AttributeError):
        pytest.skip("cannot make a device node here")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _text(text: str):
    return lambda path: path.write_text(text)


def _doc(**fields):
    return _text(json.dumps({**GOOD, **fields}))


HOSTILE = {
    # case: (make the file, words the line must hold)
    "a FIFO": (_fifo, "fifo"),
    "a character device (/dev/zero)": (_dev_zero, "character device"),
    "300 MB": (lambda p: _sparse(p, 300 * 1024 * 1024), "larger than"),
    "nested 100,000 deep": (_text('{"version": 1, "turns": 1, "messages": '
                                  + "[" * 100_000 + "]" * 100_000 + "}"), "nested"),
    "nested 300 deep inside a message": (
        _doc(messages=[{"role": "user", "content": "x",
                        "deep": json.loads("[" * 300 + "]" * 300)}]),
        "nested"),
    "messages a string": (_doc(messages="hi"), "messages"),
    "turns a string": (_doc(turns="1"), "turns"),
    "a 10,000-digit number": (_text('{"version": 1, "turns": ' + "9" * 10_000
                                    + ', "messages": []}'), "session.json"),
    "not UTF-8": (lambda p: p.write_bytes(b'{"version": 1, "turns": 1, "messages": ["\xff"]}'),
                  "utf-8"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_session_file_is_one_line_naming_it_exit_2(tmp_path, capsys, server_env,
                                                             case):
    make, words = HOSTILE[case]
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    make(folder / "session.json")
    code = main(["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
                 str(tmp_path), "--prompt", "next", "--resume", "s1"])
    line = one_line(capsys)
    assert code == 2, line
    assert "session.json" in line and words in line.lower(), line
    assert len(line) < 1_000
    assert server_env.requests == []


HOSTILE_LOGS = {
    "a FIFO": (_fifo, "fifo"),
    "a character device (/dev/zero)": (_dev_zero, "character device"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LOGS))
def test_a_work_log_that_is_no_file_is_refused_on_resume(tmp_path, capsys, server_env, case):
    make, words = HOSTILE_LOGS[case]
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps(GOOD))
    make(folder / "worklog.json")
    code = main(["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
                 str(tmp_path), "--prompt", "next", "--resume", "s1"])
    line = one_line(capsys)
    assert code == 2 and "worklog.json" in line and words in line.lower(), line
    assert server_env.requests == []


UNREADABLE_LOGS = {
    "a number too large for an int": '{"version": 1, "requests": [{"turn": 1e400, "text": "x"}],'
                                     ' "files": [], "commands": []}',
    "nested 100,000 deep": '{"version": 1, "requests": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("case", sorted(UNREADABLE_LOGS))
def test_an_unreadable_work_log_is_set_aside_with_one_notice_naming_it(
        tmp_path, capsys, server_env, case):
    """A regular file that is no log is the documented case: kept as ``worklog.json.bad``,
    reported once, and the run goes on with a fresh log (it used to end in a traceback)."""
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps(GOOD))
    (folder / "worklog.json").write_text(UNREADABLE_LOGS[case])
    main(["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
          str(tmp_path), "--prompt", "next", "--resume", "s1"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    events = [json.loads(line) for line in captured.out.splitlines()]
    (notice,) = [e for e in events if e["type"] == "error" and e["kind"] == "worklog_file"]
    assert "worklog.json" in notice["message"] and len(notice["message"]) < 1_000
    assert (folder / "worklog.json.bad").exists()


def test_a_link_whose_target_holds_a_newline_is_still_one_line(tmp_path, capsys, server_env):
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    (folder / "session.json").symlink_to(tmp_path / "out\nside")
    code = main(["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
                 str(tmp_path), "--prompt", "next", "--session", "s1"])
    line = one_line(capsys)
    assert code == 2 and "symbolic link" in line and "out\\nside" in line, line
