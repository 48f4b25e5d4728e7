"""Bad input everywhere: settings files, scenario files and compaction input.

Already proven elsewhere (listed in docs/RELIABILITY.md):

* ``ctxlab compact`` on wrong shapes, deep nesting, unknown block types, images, lone
  surrogates, non-UTF-8 bytes (a table of cases plus a Hypothesis fuzz) and a bad
  ``ctxlab.toml``: ``tests/tui/cli/test_cmd_compact.py``;
* scenario files with YAML errors, unknown tools, keys and workspaces → ``FILE:LINE:``:
  ``tests/tui/cli/test_cmd_run.py``.

This file adds ``ctxlab.toml`` for ``ctxlab run``, more broken scenario files, and a huge
result full of control characters for ``ctxlab compact``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from core.archive.store import Archive
from tests.support.messages_server import MessagesServer
from tui.cli import main

# -- ctxlab.toml for `ctxlab run` ---------------------------------------------------------------

BAD_TOML = {
    "string for a number": ('context_limit = "big"\n', "context_limit"),
    "negative": ("keep_recent = -1\n", "keep_recent"),
    "zero": ("batch-limit = 0\n", "batch_limit"),
    "float": ("large_result = 1.5\n", "large_result"),
    "boolean": ("max_messages = true\n", "max_messages"),
    "too few messages": ("max_messages = 2\n", "max_messages"),
    "in the table": ("[thresholds]\nsummary-input-limit = -5\n", "summary_input_limit"),
    "syntax error": ("context_limit = [\n", "Invalid value"),
    "not UTF-8": (b"context_limit = '\xff'\n", "ctxlab.toml"),
}


def run_in(capsys: pytest.CaptureFixture[str], workspace: Path, *args: str
           ) -> tuple[int, str, str]:
    code = main(["run", "--headless", "--json", "--workspace", str(workspace), *args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2
    assert out == ""  # nothing ran: not even run_start
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("ctxlab run: ")
    for needle in needles:
        assert needle in line, line


@pytest.mark.parametrize("case", sorted(BAD_TOML))
def test_a_bad_ctxlab_toml_stops_run_up_front_naming_file_and_key(
        tmp_path, capsys, monkeypatch, messages_server: MessagesServer, case):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    text, key = BAD_TOML[case]
    toml = tmp_path / "ctxlab.toml"
    toml.write_bytes(text if isinstance(text, bytes) else text.encode())

    code, out, err = run_in(capsys, tmp_path, "--provider", "anthropic", "--prompt", "hi")

    assert_refused(code, out, err, str(toml), key)
    assert messages_server.requests == []  # refused before any model call
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctxlab.toml"]


def test_a_bad_threshold_flag_on_a_scenario_run_names_the_key(tmp_path, capsys):
    code, out, err = run_in(capsys, tmp_path / "ws", "--scenario", "big-log",
                            "--reactive-keep", "0")
    assert_refused(code, out, err, "reactive_keep", "command line")
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("command", ["run", "compact"])
def test_a_thresholds_key_that_is_not_a_table_is_a_one_line_error(tmp_path, capsys, command):
    (tmp_path / "ctxlab.toml").write_text("thresholds = 5\n", encoding="utf-8")
    if command == "run":
        code = main(["run", "--headless", "--scenario", "big-log", "--workspace", str(tmp_path)])
    else:
        messages = tmp_path / "in.json"
        messages.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
        code = main(["compact", str(messages), "--workdir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert "ctxlab.toml" in err and "thresholds" in err


# -- scenario files -----------------------------------------------------------------------------

HEAD = "name: broken\nworkspace: big_log\n"
TURN = "sessions:\n  - turns:\n      - user: hi\n"

BAD_SCENARIOS = {
    # case: (text, line, words the one-line reason must contain)
    "empty file": ("", 1, "must be a mapping"),
    "a list at the top": ("[1, 2]\n", 1, "must be a mapping"),
    "sessions not a list": (HEAD + "sessions: 5\n", 3, "sessions must be a list"),
    "no sessions": (HEAD + "sessions: []\n", 3, "at least one session"),
    "turns not a list": (HEAD + "sessions:\n  - turns: hello\n", 4, "turns must be a list"),
    "tool call not a mapping": (
        HEAD + TURN + "        replies:\n          - tools: [read_file]\n", 7,
        "a tool call must be a mapping"),
    "tool input not a mapping": (
        HEAD + TURN + "        replies:\n          - tools:\n              - read_file: 5\n",
        8, "the input of read_file must be a mapping"),
    "unknown scripted error": (
        HEAD + TURN + "        replies:\n          - error: teapot\n", 7, "unknown error 'teapot'"),
    "probe without expect": (HEAD + TURN + "        probes: [{ask: q}]\n", 6,
                             "a probe needs 'ask' and 'expect'"),
    "misspelt threshold": (HEAD + "thresholds:\n  context_limt: 5\n" + TURN, 4,
                           "unknown threshold 'context_limt'"),
    "self-referencing alias": ("name: &a [*a]\n", 1, "missing 'workspace'"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_a_broken_scenario_file_is_one_line_naming_file_and_line(tmp_path, capsys, case):
    text, line, words = BAD_SCENARIOS[case]
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")

    code, out, err = run_in(capsys, tmp_path / "ws", "--scenario", str(path))

    assert_refused(code, out, err, f"ctxlab run: {path}:{line}: ", words)
    assert not (tmp_path / "ws").exists()  # nothing generated


def test_a_scenario_file_that_is_not_utf8_names_the_file(tmp_path, capsys):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe name: x\n")
    code, out, err = run_in(capsys, tmp_path / "ws", "--scenario", str(path))
    assert_refused(code, out, err, str(path), "UTF-8".lower())


SEEDED_MEMORY = {
    "path-like name": ("../../etc/passwd", "user", 4, "looks like a file path"),
    "unknown type": ("tabs", "nope", 5, "unknown memory type"),
    # YAML values that are not text must not become records named "None", "42", "True"
    "null name": ("null", "user", 4, "name must be text, not null"),
    "empty name": ("", "user", 4, "name must be text, not null"),
    "number name": ("42", "user", 4, "name must be text, not a number"),
    "boolean name": ("yes", "user", 4, "name must be text, not a boolean"),
    "list name": ("[a, b]", "user", 4, "name must be text, not a list"),
    "null type": ("tabs", "~", 5, "type must be text, not null"),
}


@pytest.mark.parametrize("case", sorted(SEEDED_MEMORY))
def test_a_bad_seeded_memory_record_is_refused_at_load_with_its_line(tmp_path, capsys, case):
    name, kind, line, words = SEEDED_MEMORY[case]
    path = tmp_path / "seeded.yaml"
    path.write_text(HEAD + f"memory:\n  - name: {name}\n    type: {kind}\n"
                    "    description: d\n    body: b\n" + TURN, encoding="utf-8")

    code, out, err = run_in(capsys, tmp_path / "ws", "--scenario", str(path))

    assert_refused(code, out, err, f"ctxlab run: {path}:{line}: ", words)
    assert not (tmp_path / "ws").exists()


def test_a_bad_threshold_value_in_a_scenario_names_its_line(tmp_path, capsys):
    path = tmp_path / "budget.yaml"
    path.write_text(HEAD + "thresholds:\n  context_limit: big\n" + TURN, encoding="utf-8")

    code, out, err = run_in(capsys, tmp_path / "ws", "--scenario", str(path))

    assert_refused(code, out, err, f"ctxlab run: {path}:4: ", "context_limit")


# -- ctxlab compact: a huge result full of control characters -----------------------------------

def test_a_huge_result_with_control_characters_is_persisted_byte_exact(tmp_path, capsys):
    noise = "".join(chr(c) for c in range(32)) + "\x7f\u2028\u2029\ufeff"
    content = noise * 10 + "é" * 3_000_000 + noise
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_huge",
                                           "name": "bash", "input": {"command": "cat"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_huge",
                                      "content": content}]},
    ]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(messages), encoding="utf-8")

    code = main(["compact", str(path), "--workdir", str(tmp_path / "work"), "--json"])

    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    result = json.loads(out)
    (entry,) = result["ledger"]
    saved = (tmp_path / "work" / entry["where"]).read_bytes()
    assert hashlib.sha256(saved).hexdigest() == hashlib.sha256(content.encode()).hexdigest()
    assert result["chars_after"] < 10_000 < result["chars_before"]


# -- text that looks like a line break -----------------------------------------------------------

@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_transcript_holding_unicode_line_separators_reads_back(tmp_path, separator):
    content = f"minified.js: a{separator}b"
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_js",
                                           "name": "read_file", "input": {"path": "a.js"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_js",
                                      "content": content}]},
    ]
    archive = Archive(tmp_path)
    rel = archive.write_transcript(messages)
    assert (tmp_path / rel).read_text(encoding="utf-8").count("\n") == 3  # one line each
    assert archive.read_transcript(rel) == messages
    assert archive.recover("toolu_js", rel) == content


# -- ctxlab.toml in live mode ---------------------------------------------------------------------

@pytest.mark.parametrize("toml", ["context_limit = 1234\n", 'context_limit = "big"\n'])
def test_live_mode_reads_the_ctxlab_toml_of_the_current_directory(tmp_path, monkeypatch,
                                                                   capsys, toml):
    import tui.cli.cmd_app

    (tmp_path / "ctxlab.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    launched = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch",
                        lambda config, theme: launched.append(config) or 0)

    code = main([])

    if "big" in toml:
        err = capsys.readouterr().err
        assert code == 2 and launched == []
        assert "ctxlab.toml" in err and "context_limit" in err
    else:
        (config,) = launched
        assert config.scenario is None  # live mode
        assert config.thresholds is not None and config.thresholds.context_limit == 1234
