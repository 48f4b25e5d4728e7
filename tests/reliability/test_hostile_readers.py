"""Files ``compact``, ``run --scenario`` and every command's ``ctxlab.toml`` read: a FIFO,
``/dev/zero``, and a settings file nested 100,000 deep.

Each is one line naming the right file and what is wrong with it, exit 2, at once: no
hang (a deadline fails the test instead), no read until memory runs out, no traceback, and
nothing created. Everything goes through the real command line, ``tui.cli.main``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.within import main_within

DEEP = 100_000
HISTORY = '[{"role": "user", "content": "hi"}]'


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


NOT_FILES = {"a FIFO": (_fifo, "is a FIFO (named pipe), not a file"),
             "a link to /dev/zero": (_zero, "is a character device, not a file")}


@pytest.mark.parametrize("case", sorted(NOT_FILES))
def test_compact_on_a_fifo_or_dev_zero_is_one_line_at_once(tmp_path, capsys, case):
    make, words = NOT_FILES[case]
    source = make(tmp_path / "history.json")
    work = tmp_path / "w"
    code = main_within(["compact", str(source), "--workdir", str(work)], fifos=(source,))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"ctxlab compact: {source}: {words}\n"
    assert not work.exists()


def test_compact_on_dev_zero_itself_is_one_line(tmp_path, capsys):
    code = main_within(["compact", "/dev/zero", "--workdir", str(tmp_path / "w")])
    assert code == 2
    assert capsys.readouterr().err == "ctxlab compact: /dev/zero: is a character device, " \
                                      "not a file\n"


def test_compact_on_a_history_nested_300_deep_blames_the_input_at_once(tmp_path, capsys):
    """It parses, but is deeper than any message: refused when read, so a RecursionError
    later can only be ctxlab's own (and is never said to be the input's)."""
    deep = "[" * 300 + "]" * 300
    source = tmp_path / "history.json"
    source.write_text(f'[{{"role": "user", "content": [{{"type": "text", "text": "x", '
                      f'"extra": {deep}}}]}}]', encoding="utf-8")
    code = main_within(["compact", str(source), "--workdir", str(tmp_path / "w")])
    assert code == 2
    assert capsys.readouterr().err == f"ctxlab compact: {source}: nested more than 200 " \
                                      "levels deep\n"


@pytest.mark.parametrize("case", sorted(NOT_FILES))
def test_a_scenario_that_is_a_fifo_or_dev_zero_is_one_line_at_once(tmp_path, capsys, case):
    make, words = NOT_FILES[case]
    scenario = make(tmp_path / "scenario.yaml")
    workspace = tmp_path / "ws"
    code = main_within(["run", "--headless", "--json", "--workspace", str(workspace),
                        "--scenario", str(scenario)], fifos=(scenario,))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"ctxlab run: {scenario}: {words}\n"
    assert not workspace.exists()


@pytest.mark.parametrize("case", ["a FIFO", "a file"])
def test_a_workspace_that_is_no_folder_is_one_line_at_once(tmp_path, capsys, case):
    """Before: the run started, then ended in "[Errno 17] File exists" saving its session."""
    workspace = tmp_path / "ws"
    if case == "a FIFO":
        os.mkfifo(workspace)
    else:
        workspace.write_text("mine\n", encoding="utf-8")
    code = main_within(["run", "--headless", "--json", "--workspace", str(workspace),
                        "--scenario", "refactor-auth"], fifos=(workspace,))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"ctxlab run: --workspace {workspace}: not a folder\n"
    assert case == "a FIFO" or workspace.read_text(encoding="utf-8") == "mine\n"


def _toml(text: str):
    def make(path: Path) -> Path:
        path.write_text(text, encoding="utf-8")
        return path
    return make


BAD_TOML = {
    "an array nested 100,000 deep": (_toml("a = " + "[" * DEEP + "]" * DEEP + "\n"),
                                     "is nested too deeply to read"),
    "inline tables nested 100,000 deep": (_toml("a = " + "{b = " * DEEP + "1" + "}" * DEEP
                                                + "\n"), "is nested too deeply to read"),
    "a context_limit of 400 digits": (_toml("context_limit = 1" + "0" * 400 + "\n"),
                                     "context_limit: must be at most 1,000,000,000,000"),
    "a FIFO": NOT_FILES["a FIFO"],
    "a link to /dev/zero": NOT_FILES["a link to /dev/zero"],
}


@pytest.mark.parametrize("command", ["run", "compact"])
@pytest.mark.parametrize("case", sorted(BAD_TOML))
def test_a_hostile_ctxlab_toml_is_its_own_problem_in_one_line(tmp_path, capsys, command,
                                                               case):
    make, words = BAD_TOML[case]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    toml = make(workspace / "ctxlab.toml")
    history = tmp_path / "history.json"
    history.write_text(HISTORY, encoding="utf-8")
    if command == "run":
        argv = ["run", "--headless", "--json", "--scenario", "big-log", "--workspace",
                str(workspace)]
    else:
        argv = ["compact", str(history), "--workdir", str(workspace)]
    code = main_within(argv, seconds=30, fifos=(toml,))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"ctxlab {command}: ") and line.endswith(f"ctxlab.toml: {words}")
    assert str(history) not in line  # the settings' problem, not the input's
    assert sorted(p.name for p in workspace.iterdir()) == ["ctxlab.toml"]
