"""``[api]`` in ctxlab.toml and the ``--api-*`` flags: parsed, layered, refused clearly."""

from __future__ import annotations

import json

import pytest

from core.compact.managers import Manager
from core.config import ConfigError
from core.providers.api_context import (
    ApiContext,
    ContextEditing,
    ServerCompaction,
    api_context_from_mapping,
    load_api_context,
)
from tui.cli import main

TOML = {"api": {"cache": False, "context_editing": {"trigger": 40_000, "keep": 2,
                                                      "exclude_tools": ["memory"]},
                "compaction": {"trigger": 80_000, "pause_after_compaction": True}}}


def test_the_api_table_builds_both_managers():
    api = load_api_context(TOML)
    assert api == ApiContext(
        editing=ContextEditing(trigger=40_000, keep=2, exclude_tools=("memory",)),
        compaction=ServerCompaction(trigger=80_000, pause_after_compaction=True), cache=False)
    assert api.managers() == (Manager.API_EDIT, Manager.API_COMPACT)
    assert api.manager(Manager.PIPELINE) == "ctxlab+api-edit+api-compact"
    assert api.manager(Manager.API_EDIT) == "api-edit+api-compact"  # each manager once
    assert ApiContext().manager(Manager.TRUNCATE) == "truncate" and not ApiContext().active


def test_a_flag_changes_one_key_of_its_table():
    api = load_api_context(TOML, {"compaction": {"trigger": 90_000}})
    assert api.compaction == ServerCompaction(trigger=90_000, pause_after_compaction=True)
    assert api.editing is not None and api.editing.keep == 2


@pytest.mark.parametrize("data, words", [
    ({"compaction": {"trigger": 1_000}}, "at least 50,000"),
    ({"context_editing": {"keeep": 1}}, "unknown setting 'keeep'"),
    ({"cache": "yes"}, "true or false"),
    ({"speed": 1}, "unknown setting api"),
    ({"compaction": 5}, "table or true/false"),
    ({"compaction": {"trigger": 10**400}}, "at most 1,000,000,000,000, got a number of more"),
    ({"context_editing": {"trigger": 10**5000}}, "up to 1,000,000,000,000, got a number of"),
    ({"context_editing": {"keep": -(10**400)}}, "positive integer"),
])
def test_bad_settings_name_their_key(data, words):
    with pytest.raises(ConfigError, match=words):
        api_context_from_mapping(data, source="ctxlab.toml")


def test_enabled_false_turns_a_table_off():
    assert load_api_context({"api": {"compaction": {"enabled": False}}}).compaction is None


def test_an_invalid_flag_exits_2_before_any_request(tmp_path, capsys, messages_server,
                                                    monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    code = main(["run", "--headless", "--provider", "anthropic", "--prompt", "hi",
                 "--workspace", str(tmp_path), "--api-compaction-trigger", "100"])
    err = capsys.readouterr().err
    assert code == 2 and "at least 50,000" in err and "Traceback" not in err
    assert err.count("\n") == 1 and messages_server.requests == []


def test_flags_reach_the_request(tmp_path, capsys, messages_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    messages_server.reply_text("hello")
    code = main(["run", "--headless", "--provider", "anthropic", "--prompt", "hi", "--json",
                 "--no-memory", "--workspace", str(tmp_path), "--api-clear-keep", "1",
                 "--api-compaction", "--no-prompt-cache"])
    assert code == 0, capsys.readouterr().err
    body = messages_server.requests_to()[0].body
    edits = body["context_management"]["edits"]
    assert [e["type"] for e in edits] == ["clear_tool_uses_20250919", "compact_20260112"]
    assert edits[0]["keep"] == {"type": "tool_uses", "value": 1}
    assert "cache_control" not in json.dumps(body)
