"""Hostile files ctxlab reads back: scenario files and saved sessions, tampered on purpose.

Each is refused with one line naming the file (and, for a scenario, the line), exit 2,
never a traceback, and nothing in the workspace is created or rewritten.
"""

from __future__ import annotations

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
        8, "tag",
    ),
    "python tag on a scalar": (
        REPLY + "              - bash: {command: !!python/name:os.system ''}\n",
        8, "tag",
    ),
    "binary tag": (REPLY + "              - bash: {command: !!binary aGVsbG8=}\n", 8, "tag"),
    "tag on the request text": (
        "name: hostile\nworkspace: big_log\nsessions:\n  - turns:\n      - user: !!binary aGk=\n",
        5, "tag",
    ),
    "unquoted date": (REPLY + "              - bash: {command: 2024-01-01}\n", 8, "date"),
    "unquoted timestamp": (
        REPLY + "              - write_file: {path: a, content: 2001-12-14t21:59:43.10-05:00}\n",
        8, "date",
    ),
    "a key that is a list": (REPLY + "              - bash: {? [a, b] : x}\n", 8, "key"),
    "50,000-deep flow nesting": (
        REPLY + "              - bash: {command: " + "[" * DEEP + "]" * DEEP + "}\n",
        8, "nest",
    ),
    "50,000-deep block nesting": (
        HEAD + "        probes:\n          " + "- " * DEEP + "x\n", 7, "nest",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SCENARIOS))
def test_a_hostile_scenario_file_is_one_line_naming_file_and_line(tmp_path, capsys, case):
    text, line, words = HOSTILE_SCENARIOS[case]
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    workspace = tmp_path / "ws"

    code = main(["run", "--headless", "--json", "--workspace", str(workspace),
                 "--scenario", str(path)])
    out, err = capsys.readouterr()

    assert "Traceback" not in err
    assert code == 2, err
    assert out == ""  # nothing ran: not even run_start
    (message,) = err.splitlines()
    assert message.startswith(f"ctxlab run: {path}:{line}: "), message
    assert words in message.lower(), message
    assert not workspace.exists()  # nothing generated
