"""Hostile files ctxlab reads back: scenario files and saved sessions, tampered on purpose.

Each is refused with one line naming the file (and, for a scenario, the line), exit 2,
never a traceback, and nothing in the workspace is created or rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main

# -- scenario files -----------------------------------------------------------------------------

HEAD = "name: hostile\nworkspace: big_log\nsessions:\n  - turns:\n      - user: hi\n"
REPLY = HEAD + "        replies:\n          - tools:\n"
DEEP = 50_000

HOSTILE_SCENARIOS = {
    # case: (text, line, words the one-line reason must contain)
    "python object tag": (
        REPLY + "              - bash: !!python/object/apply:os.system ['echo pwned']\n",
        8,
        "tag",
    ),
    "python tag on a scalar": (
        REPLY + "              - bash: {command: !!python/name:os.system ''}\n",
        8,
        "tag",
    ),
    "binary tag": (REPLY + "              - bash: {command: !!binary aGVsbG8=}\n", 8, "tag"),
    "tag on the request text": (
        "name: hostile\nworkspace: big_log\nsessions:\n  - turns:\n      - user: !!binary aGk=\n",
        5,
        "tag",
    ),
    "unquoted date": (REPLY + "              - bash: {command: 2024-01-01}\n", 8, "date"),
    "unquoted timestamp": (
        REPLY + "              - write_file: {path: a, content: 2001-12-14t21:59:43.10-05:00}\n",
        8,
        "date",
    ),
    "a key that is a list": (REPLY + "              - bash: {? [a, b] : x}\n", 8, "key"),
    "50,000-deep flow nesting": (
        REPLY + "              - bash: {command: " + "[" * DEEP + "]" * DEEP + "}\n",
        8,
        "nest",
    ),
    "50,000-deep block nesting": (
        HEAD + "        probes:\n          " + "- " * DEEP + "x\n",
        7,
        "nest",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SCENARIOS))
def test_a_hostile_scenario_file_is_one_line_naming_file_and_line(tmp_path, capsys, case):
    text, line, words = HOSTILE_SCENARIOS[case]
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    workspace = tmp_path / "ws"

    code = main(
        ["run", "--headless", "--json", "--workspace", str(workspace), "--scenario", str(path)]
    )
    out, err = capsys.readouterr()

    assert "Traceback" not in err
    assert code == 2, err
    assert out == ""  # nothing ran: not even run_start
    (message,) = err.splitlines()
    assert message.startswith(f"ctxlab run: {path}:{line}: "), message
    assert words in message.lower(), message
    assert not workspace.exists()  # nothing generated


# -- saved sessions -------------------------------------------------------------------------------

DEEP_MESSAGES = "[" * 100_000 + "]" * 100_000
GOOD_MESSAGES = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]'


def session_text(version: str = "1", turns: str = "1", messages: str = GOOD_MESSAGES) -> str:
    """A session.json as ctxlab writes it, with one field swapped for hostile JSON text."""
    return f'{{"version": {version}, "turns": {turns}, "messages": {messages}}}'


TAMPERED_SESSIONS = {
    # case: (session.json text, or None for a directory; words the one line must contain)
    "turns 1e400": (session_text(turns="1e400"), "turns"),
    "turns negative": (session_text(turns="-3"), "turns"),
    "turns not a number": (session_text(turns="true"), "turns"),
    "messages nested 100,000 deep": (session_text(messages=DEEP_MESSAGES), "nested"),
    "version 99": (session_text(version="99"), "version 99"),
    "no version": ('{"turns": 1, "messages": []}', "version"),
    "not an object": ("[1, 2]", "object"),
    "session.json is a directory": (None, "directory"),
}


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a directory)."""
    return {
        p.relative_to(root).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


# --resume reads the file; --session starts a new conversation, so only a session.json that
# no save could replace (a directory) stops it
RUNS = [(case, "--resume") for case in sorted(TAMPERED_SESSIONS)] + [
    ("session.json is a directory", "--session")
]


@pytest.mark.parametrize(("case", "flag"), RUNS)
def test_a_tampered_session_is_one_line_and_nothing_is_overwritten(
    tmp_path, capsys, server_env, case, flag
):
    text, words = TAMPERED_SESSIONS[case]
    folder = tmp_path / ".ctxlab" / "sessions" / "work"
    folder.mkdir(parents=True)
    if text is None:
        (folder / "session.json").mkdir()
        (folder / "session.json" / "keep.txt").write_text("mine\n")
    else:
        (folder / "session.json").write_text(text, encoding="utf-8")
    before = _snapshot(tmp_path / ".ctxlab")

    code = main(
        [
            "run",
            "--headless",
            "--provider",
            "anthropic",
            "--json",
            "--workspace",
            str(tmp_path),
            "--prompt",
            "next",
            flag,
            "work",
        ]
    )
    err = capsys.readouterr().err

    assert "Traceback" not in err
    assert code != 0
    (message,) = err.splitlines()
    assert "session.json" in message and words in message.lower(), message
    after = _snapshot(tmp_path / ".ctxlab")
    assert {k: v for k, v in after.items() if k in before} == before  # nothing overwritten
    if flag == "--resume":
        assert server_env.requests == []  # refused before any model call


# -- what the model sends -------------------------------------------------------------------------


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_a_lone_surrogate_in_a_tool_input_does_not_end_the_run(tmp_path, capsys, json_flag):
    """A YAML (or JSON) escape can spell a lone surrogate (``"\\ud800"``): a Python string no
    UTF-8 stream can print. The run goes on and its events still print, escaped."""
    path = tmp_path / "odd.yaml"
    path.write_text(
        REPLY
        + '              - write_file: {path: odd.txt, content: "half \\ud800 a pair"}\n'
        + "              - bash: {command: \"echo '\\udcff'\"}\n",
        encoding="utf-8",
    )
    workspace = tmp_path / "ws"

    code = main(
        ["run", "--headless", *json_flag, "--workspace", str(workspace), "--scenario", str(path)]
    )
    out, err = capsys.readouterr()

    assert "Traceback" not in err and "UnicodeEncodeError" not in err
    assert code == 0, err
    if json_flag:
        events = [json.loads(line) for line in out.splitlines()]
        (call,) = [e for e in events if e["type"] == "tool_call" and e["name"] == "write_file"]
        assert call["input"]["content"] == "half \ud800 a pair"
        assert events[-1]["type"] == "run_end" and events[-1]["ok"] is True
    else:
        assert "write_file" in out
