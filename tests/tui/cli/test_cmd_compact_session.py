"""``ctxlab compact`` reads ctxlab's own saved session file as well as a bare message array."""

from __future__ import annotations

import json
import re

from core.sources.agent.saved import save_session
from tests.tui.cli.test_cmd_compact import (
    assert_one_line_error,
    budget_snip_micro_history,
    compact,
    compact_json,
    write_input,
)


def same(messages: list) -> str:
    """The messages with the random part of archive file names blanked."""
    return re.sub(r"transcript_[0-9a-f]{32}", "transcript_*", json.dumps(messages))


def test_a_saved_session_file_compacts_like_its_messages(capsys, tmp_path):
    history = budget_snip_micro_history()
    session = save_session(tmp_path / "ws", "default", history, turns=3)
    assert json.loads(session.read_text(encoding="utf-8"))["version"] == 1  # the real file
    from_session = compact_json(capsys, session, tmp_path / "a")
    from_array = compact_json(capsys, write_input(tmp_path, history), tmp_path / "b")
    assert same(from_session["messages"]) == same(from_array["messages"])
    assert from_session["chars_after"] == from_array["chars_after"]
    assert [e["stage"] for e in from_session["events"] if e["type"] == "stage"] == \
        [e["stage"] for e in from_array["events"] if e["type"] == "stage"]


def test_a_session_file_with_a_bad_message_names_the_message(capsys, tmp_path):
    path = write_input(tmp_path, {"version": 1, "turns": 1,
                                  "messages": [{"role": "user", "content": "a"}, {"x": 1}]})
    code, _, err = compact(capsys, path, tmp_path / "w")
    assert_one_line_error(code, err, f"{path}: ", "message 1", "role")


def test_an_object_that_is_not_a_session_says_both_accepted_shapes(capsys, tmp_path):
    path = write_input(tmp_path, {"role": "user", "content": "hi"})
    code, _, err = compact(capsys, path, tmp_path / "w")
    assert_one_line_error(code, err, "array", "session file")


def test_a_session_of_an_unknown_version_is_refused_in_one_line(capsys, tmp_path):
    path = write_input(tmp_path, {"version": 9, "messages": []})
    code, _, err = compact(capsys, path, tmp_path / "w")
    assert_one_line_error(code, err, "version 9")
