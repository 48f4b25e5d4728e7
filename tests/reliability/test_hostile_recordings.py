"""Hostile session files given to ``ctxlab replay``: wrong types, reused ids, deep nesting.

A recording is another program's file. Whatever a line holds, the replay skips that line
with a notice naming its number (or, when nothing is left, exits 2 with one line); it never
ends in a traceback. Everything goes through the real command line, ``tui.cli.main``.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.sources.replay.conftest import (
    CHAT,
    CLAUDE,
    CODEX,
    CODEX_0_58,
    CODEX_0_171,
    MESSAGES,
    REQUESTS,
    WATCHED_CODEX,
)
from tests.core.sources.replay.test_claude_code_real import OPUS as CLAUDE_2_1_OPUS
from tests.core.sources.replay.test_claude_code_real import SESSION as CLAUDE_2_1
from tests.core.sources.replay.test_watch_recordings import COMPACTIONS as WATCHED_2_1
from tests.reliability.within import main_within
from tui.cli import main

DEEP = "[" * 1_000 + "]" * 1_000


def replay(capsys: pytest.CaptureFixture[str], path: Path, work: Path
           ) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["replay", str(path), "--headless", "--json", "--workdir", str(work)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def first_assistant(lines: list[dict[str, Any]]) -> int:
    return next(i for i, row in enumerate(lines) if row.get("type") == "assistant")


def _claude(edit: Any) -> list[str]:
    lines = rows(CLAUDE)
    edit(lines[first_assistant(lines)]["message"])
    return [json.dumps(row) for row in lines]


def _codex(edit: Any) -> list[str]:
    lines = rows(CODEX)
    index = next(i for i, row in enumerate(lines) if row["type"] == "response_item"
                 and row["payload"].get("role") == "assistant")
    edit(lines[index]["payload"])
    return [json.dumps(row) for row in lines]


def _watched_and(line: dict[str, Any]) -> tuple[list[str], str]:
    """A watch recording of Codex with ``line`` after it, and the notice it must get."""
    lines = [json.dumps(row) for row in rows(WATCHED_CODEX)]
    return [*lines, json.dumps(line)], f"line {len(lines) + 1}: "


def _wrong_api(line: dict[str, Any], words: str) -> tuple[list[str], str]:
    lines, where = _watched_and(line)
    return lines, where + words


ITEMS = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]

HOSTILE = {
    # case: (lines of the file, what the skipped line's notice says)
    "usage a list": (_claude(lambda m: m.update(usage=[1, 2])), "usage is a list"),
    "usage a string": (_claude(lambda m: m.update(usage="many")), "usage is a str"),
    "usage 10**400 tokens": (_claude(lambda m: m["usage"].update(input_tokens=10**400)),
                             "not a token count"),
    "text a number": (_claude(lambda m: m.update(content=[{"type": "text", "text": 5}])),
                      "text (text) is a int"),
    "text an object": (_claude(lambda m: m.update(content=[{"type": "text", "text": {}}])),
                       "text (text) is a dict"),
    "tool_use id a number": (_claude(lambda m: m.update(content=[
        {"type": "tool_use", "id": 7, "name": "bash", "input": {}}])), "id (tool_use) is a int"),
    "tool_use id an object": (_claude(lambda m: m.update(content=[
        {"type": "tool_use", "id": {"x": 1}, "name": "bash", "input": {}}])),
        "id (tool_use) is a dict"),
    "codex text a number": (_codex(lambda p: p.update(content=[
        {"type": "output_text", "text": 5}])), "text is a int"),
    "codex text a list": (_codex(lambda p: p.update(content=[
        {"type": "output_text", "text": ["a"]}])), "text is a list"),
    "a line nested 1,000 deep": (
        [json.dumps(row) for row in rows(CLAUDE)[:3]]
        + ['{"type": "user", "uuid": "deep", "message": {"content": ' + DEEP + "}}"]
        + [json.dumps(row) for row in rows(CLAUDE)[3:]], "nested too deeply"),
    "the first line nested 1,000 deep": (
        ['{"type": "user", "uuid": "deep", "message": {"content": ' + DEEP + "}}"]
        + [json.dumps(row) for row in rows(CLAUDE)], "line 1 is nested too deeply"),
    "a line nested 300 deep (it parses)": (
        [json.dumps(row) for row in rows(CLAUDE)[:3]]
        + ['{"type": "user", "uuid": "d", "message": {"content": ' + "[" * 300 + "]" * 300
           + "}}"] + [json.dumps(row) for row in rows(CLAUDE)[3:]],
        "nested more than 200 levels deep"),
    # a body whose fields are another API's than the one its line resolves to
    "api messages over an input": _wrong_api(
        {"api": "messages", "request": {"model": "gpt-5", "input": "hi"}, "response": None},
        '"messages" is absent, not an array, and the messages API needs it'),
    "messages null beside an input": _wrong_api(
        {"request": {"model": "x", "messages": None, "input": ITEMS}, "response": None},
        '"messages" is null, not an array, and the messages API needs it'),
    "chat with messages null and an input": _wrong_api(
        {"api": "chat.completions", "request": {"model": "x", "messages": None, "input": "hi"}},
        '"messages" is null, not an array, and the chat.completions API needs it'),
    "responses without an input": _wrong_api(
        {"api": "responses", "request": {"model": "x", "messages": [
            {"role": "user", "content": "hi"}]}},
        '"input" is absent, not items or text, and the responses API needs it'),
    "a codex line nested 1,000 deep": (
        [json.dumps(row) for row in rows(CODEX)] + ['{"type": "event_msg", "payload": '
                                                    + DEEP + "}"], "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_line_with_a_wrong_type_is_skipped_and_reported(tmp_path, capsys, case):
    lines, words = HOSTILE[case]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, events, err = replay(capsys, path, tmp_path / "w")
    assert "Traceback" not in err
    assert code == 0, err
    notices = [e["message"] for e in events if e["type"] == "replay_notice"]
    assert any(words in n and "skipped" in n and "line " in n for n in notices), notices
    assert events[-1] == {**events[-1], "type": "run_end", "ok": True}


def test_a_file_with_no_usable_line_is_exit_2_with_the_first_reason(tmp_path, capsys):
    lines = rows(CLAUDE)
    for row in lines:
        if row.get("type") == "assistant":
            row["message"]["usage"] = "x"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in lines) + "\n", encoding="utf-8")
    code, events, err = replay(capsys, path, tmp_path / "w")
    assert code == 2 and events == []
    (line,) = err.splitlines()
    assert line.startswith(f"ctxlab replay: {path}: no model request found")
    assert "message.usage is a str, not an object" in line


def test_a_reused_uuid_on_a_broken_chain_is_reported_not_a_traceback(tmp_path, capsys):
    user = {"type": "user", "uuid": "x", "parentUuid": "gone", "sessionId": "s",
            "message": {"role": "user", "content": "hi"}}
    reply = {"type": "assistant", "uuid": "a", "parentUuid": "x", "sessionId": "s",
             "message": {"role": "assistant", "id": "m", "content": [
                 {"type": "text", "text": "ok"}]}}
    other = {"type": "progress", "uuid": "a", "parentUuid": None, "sessionId": "s"}
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (user, reply, other)) + "\n")
    code, events, err = replay(capsys, path, tmp_path / "w")
    assert "Traceback" not in err
    notices = {e["kind"]: e["message"] for e in events if e["type"] == "replay_notice"}
    assert "line 3 reuses the uuid of line 2" in notices.get("duplicate-uuid", ""), notices
    assert code == 0 and "broken-chain" in notices


def test_a_compaction_trigger_that_is_a_path_names_no_file_outside(tmp_path, capsys):
    lines = rows(CLAUDE)
    boundary = next(r for r in lines if r.get("subtype") == "compact_boundary")
    boundary["compactMetadata"]["trigger"] = "/../../../../../../../" + "x/" * 3 + "escaped"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in lines) + "\n", encoding="utf-8")
    work = tmp_path / "w"
    code, events, err = replay(capsys, path, work)
    assert code == 0, err
    written = {f for e in events if e["type"] == "stage" for f in e.get("files", ())}
    assert written and all(Path(f).parent.as_posix() == ".replay/compactions"
                           for f in written), written
    assert not list(tmp_path.rglob("escaped*"))


def test_a_fifo_given_as_the_session_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    code = main_within(["replay", str(fifo), "--headless", "--workdir", str(tmp_path / "w")],
                       fifos=(fifo,))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"ctxlab replay: {fifo}: is a FIFO (named pipe), not a session file\n"


def test_dev_zero_is_called_a_device_not_empty(tmp_path, capsys):
    code = main_within(["replay", "/dev/zero", "--headless", "--workdir", str(tmp_path / "w")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == "ctxlab replay: /dev/zero: is a character device, not a session file\n"


def test_a_messages_document_nested_1000_deep_is_one_line(tmp_path, capsys):
    path = tmp_path / "history.json"
    path.write_text('[{"role": "user", "content": ' + DEEP + '}, {"role": "assistant", '
                    '"content": "ok"}]')
    code, events, err = replay(capsys, path, tmp_path / "w")
    assert code == 2 and events == []
    assert err == f"ctxlab replay: {path}: is nested too deeply to read\n"


def _with_surrogates() -> list[str]:
    lines = rows(CLAUDE)
    for row in lines:
        message = row.get("message") if isinstance(row.get("message"), dict) else {}
        if row.get("isCompactSummary"):
            message["content"] = "the summary \ud800 so far"
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                block["content"] = "x\ud800" * 40_000
            elif block.get("type") == "text":
                block["text"] = "a lone \udfff"
    return [json.dumps(row) for row in lines]  # \ud800 spelt as an escape: valid UTF-8


@pytest.mark.parametrize("mode", [["--json"], []])
def test_lone_surrogates_in_a_recording_replay_to_the_end(tmp_path, capsys, mode):
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(_with_surrogates()) + "\n", encoding="utf-8")
    work = tmp_path / "w"
    code = main(["replay", str(path), "--headless", "--workdir", str(work),
                 "--context-limit", "20000", *mode])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 0, err
    assert "replay end: ok" in out or '"ok": true' in out
    summaries = list((work / ".replay" / "compactions").glob("*.md"))
    assert summaries
    for summary in summaries:  # strict UTF-8, the surrogate kept as its escape
        assert "\\ud800" in summary.read_bytes().decode("utf-8")


@pytest.mark.parametrize("case", ["a FIFO", "under a file"])
def test_a_workdir_that_cannot_be_a_folder_is_one_line(tmp_path, capsys, case):
    if case == "a FIFO":
        work = tmp_path / "w"
        os.mkfifo(work)
        words = "is not a directory"
    else:
        (tmp_path / "f").write_text("mine")
        work = tmp_path / "f" / "w"
        words = "cannot be created (Not a directory)"
    code = main_within(["replay", str(CODEX), "--headless", "--workdir", str(work)],
                       fifos=(work,))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"ctxlab replay: --workdir {work}: {words}\n"


# -- any value anywhere ------------------------------------------------------------------------

VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                   st.text(max_size=4), st.lists(st.integers(), max_size=2),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                   st.just(10**400), st.just(-1), st.just("\ud800 \udfff"))
API_NAMES = st.sampled_from([None, "messages", "responses", "responses.compact",
                             "chat.completions", "bogus"])


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


# The keys the importers read: a mutation lands on one of them half the time.
READ_KEYS = frozenset({"usage", "text", "id", "name", "input", "content", "tool_use_id",
                       "thinking", "signature", "model", "timestamp", "trigger", "message",
                       "payload", "messages", "system", "info", "last_token_usage",
                       "input_tokens", "parentUuid", "uuid", "type", "role", "summary",
                       "call_id", "arguments", "output", "compactMetadata", "preTokens",
                       "request", "response", "stop_reason", "instructions",
                       "output_tokens", "metadata", "user_id", "max_tokens", "tools",
                       "attachment", "preservedMessages", "uuids", "logicalParentUuid",
                       "isMeta", "isCompactSummary", "conversation", "request_id",
                       "replacement_history", "encrypted_content", "base_instructions",
                       "total_token_usage", "model_context_window", "compaction_response_id",
                       "latest_token_usage_record", "api", "client_metadata",
                       "prompt_cache_key", "previous_response_id", "choices", "tool_calls",
                       "input_tokens_details", "cached_tokens", "function", "tool_call_id"})


def _pick(data: st.DataObject, paths: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    read = [p for p in paths if p[-1] in READ_KEYS]
    if read and data.draw(st.booleans()):
        return data.draw(st.sampled_from(read))
    return data.draw(st.sampled_from(paths))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def _mutate(row: Any, data: st.DataObject) -> None:
    """Replace a value somewhere in ``row`` (half the time), or give the line an ``api``
    (one its body may not speak, or none), or give its body a ``messages`` or ``input``
    of any value: ``"messages": null`` beside an ``input``, an ``input`` under
    ``"api": "messages"``."""
    how = data.draw(st.sampled_from(["replace", "replace", "api", "body"]))
    if how == "api" and isinstance(row, dict):
        row["api"] = data.draw(API_NAMES)
    elif how == "body" and isinstance(row, dict):
        body = row["request"] if isinstance(row.get("request"), dict) else row
        body[data.draw(st.sampled_from(["messages", "input"]))] = data.draw(VALUES)
    elif paths := _paths(row):
        _replace(row, _pick(data, paths), data.draw(VALUES))


def _mutated(source: Path, data: st.DataObject) -> str:
    if source == MESSAGES:
        document = json.loads(source.read_text(encoding="utf-8"))
        for _ in range(data.draw(st.integers(1, 3))):
            _mutate(document, data)
        return json.dumps(document)
    lines = rows(source)
    for _ in range(data.draw(st.integers(1, 3))):
        row = copy.deepcopy(data.draw(st.sampled_from(lines)))
        _mutate(row, data)
        lines[data.draw(st.integers(0, len(lines) - 1))] = row
    return "\n".join(json.dumps(row) for row in lines) + "\n"


@settings(max_examples=int(os.environ.get("FUZZ_N", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from([CLAUDE, CLAUDE_2_1, CLAUDE_2_1_OPUS, CODEX, REQUESTS,
                               WATCHED_2_1, MESSAGES, CODEX_0_58, CODEX_0_171,
                               WATCHED_CODEX, CHAT]),
       data=st.data())
def test_any_value_at_any_key_replays_or_is_one_line(tmp_path_factory, capsys, source, data):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / f"s{source.suffix}"
    path.write_text(_mutated(source, data), encoding="utf-8")
    as_json = data.draw(st.booleans())
    code = main(["replay", str(path), "--headless", "--workdir", str(folder / "w"),
                 *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("ctxlab replay: ")
    elif as_json:
        assert json.loads(out.splitlines()[-1])["type"] == "run_end"
    else:
        assert "replay end: ok" in out.splitlines()[-1]
