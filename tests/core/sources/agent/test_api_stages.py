"""The API's context management in a whole run: stages by its two managers, the compaction
block kept."""

from __future__ import annotations

from core.compact.managers import Manager
from core.compact.stages import row_of
from core.events import ModelResponse, Stage
from core.measure import json_chars, list_chars
from core.providers.api_context import COMPACTION_BETA, ApiContext, ContextEditing, ServerCompaction
from tests.support.runs import main_requests, run_prompts

EDIT = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1, "cleared_input_tokens": 30}
COMPACTION_USAGE = {
    "input_tokens": 2_000, "output_tokens": 20, "cache_creation_input_tokens": 700,
    "cache_read_input_tokens": 0,
    "iterations": [
        {"type": "compaction", "input_tokens": 90_000, "output_tokens": 1_500,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        {"type": "message", "input_tokens": 2_000, "output_tokens": 20,
         "cache_creation_input_tokens": 700, "cache_read_input_tokens": 0},
    ],
}
API = ApiContext(editing=ContextEditing(trigger=50_000), compaction=ServerCompaction(60_000))


def test_applied_edits_and_compaction_become_api_stages(messages_server, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n" * 40)
    messages_server.reply_tool_use("read_file", {"path": "notes.txt"})
    messages_server.reply_text("read it", usage={"input_tokens": 500, "output_tokens": 5,
                                                 "cache_creation_input_tokens": 420},
                               context_management={"applied_edits": [EDIT]})
    messages_server.reply_compaction("Read notes.txt: forty lines of alpha.", text="Compacted.",
                                     usage=COMPACTION_USAGE)
    messages_server.reply_text("still here")
    ok, rec = run_prompts(messages_server, tmp_path, ["read notes", "more", "again"],
                          memory=False, api_context=API)
    assert ok
    stages = [s for s in rec.of(Stage) if Manager(s.by).server]
    assert [(s.stage, s.by) for s in stages] == [("api_clear_tool_uses", "api-edit"),
                                                 ("api_compaction", "api-compact")]
    assert all(row_of(s.stage, s.by) is not None for s in stages)  # rows of the table
    cleared, compacted = stages
    assert cleared.ledger[0]["cleared_input_tokens"] == 30
    assert cleared.ledger[0]["where"] == "client"
    assert cleared.after_chars == cleared.before_chars - 120
    assert cleared.rewrite_tokens == 420
    transcript, summary = compacted.files
    assert (tmp_path / summary).read_text() == "Read notes.txt: forty lines of alpha."
    assert (tmp_path / transcript).read_text().count("\n") == compacted.before_messages
    assert compacted.ledger[0]["iterations"][0]["input_tokens"] == 90_000
    assert compacted.first_changed == 0 and compacted.pre_tokens == 2_700
    # the archive's records of what it kept, and each message's size for the inspector
    assert [r["path"] for r in compacted.archived] == [transcript]  # the summary is beside
    for stage in stages:
        snap = stage.snapshot
        assert snap is not None
        assert snap.before_sizes == [json_chars(m) for m in snap.before]
        assert snap.after_sizes == [json_chars(m) for m in snap.after]
        assert list_chars(snap.before_sizes) == stage.before_chars
    usages = [e.usage for e in rec.of(ModelResponse)]
    assert usages[2]["iterations"][0]["type"] == "compaction"
    # the block is sent back, first in its message, with the beta the API needs
    last = main_requests(messages_server)[-1]
    assert COMPACTION_BETA in last.headers["anthropic-beta"]
    kept = [m for m in last.body["messages"] if m["role"] == "assistant"
            and m["content"][0]["type"] == "compaction"]
    assert kept[0]["content"][0]["content"] == "Read notes.txt: forty lines of alpha."


def test_paused_compaction_is_sent_back_and_the_turn_goes_on(messages_server, tmp_path):
    messages_server.reply_compaction("the summary")
    messages_server.reply_text("answer after the pause")
    api = ApiContext(compaction=ServerCompaction(pause_after_compaction=True))
    ok, rec = run_prompts(messages_server, tmp_path, ["hello"], memory=False, api_context=api)
    assert ok
    second = main_requests(messages_server)[1].body["messages"]
    assert second[-1]["role"] == "assistant"
    assert second[-1]["content"][0]["type"] == "compaction"
    assert [s.stage for s in rec.of(Stage)] == ["api_compaction"]
