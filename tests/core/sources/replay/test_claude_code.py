"""Claude Code sessions: the main chain, merged assistant lines, compaction, oddities."""

from __future__ import annotations

import json
from pathlib import Path

from core.sources.replay import Compaction, Exchange, load_recording
from tests.core.sources.replay.conftest import CLAUDE


def lines(path: Path = CLAUDE) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_requests_and_the_compaction_are_found_in_order():
    rec = load_recording(CLAUDE)
    assert rec.format == "claude-code" and rec.agent == "claude-code"
    kinds = [type(s).__name__ for s in rec.steps]
    assert kinds == ["Exchange"] * 4 + ["Compaction"] + ["Exchange"] * 2
    assert rec.model == "claude-sonnet-4-5-20250929"
    assert rec.lines_read == rec.lines_total == 27
    assert rec.notices == []


def test_one_assistant_message_written_over_four_lines_is_merged():
    first = load_recording(CLAUDE).exchanges[0]
    assert [b["type"] for b in first.reply["content"]] == \
        ["thinking", "text", "tool_use", "tool_use"]
    assert first.usage["output_tokens"] == 231  # the last line's usage
    assert first.stop_reason == "tool_use"


def test_a_batch_of_tool_results_becomes_one_user_message_and_block_lists_stay_lists():
    second = load_recording(CLAUDE).exchanges[1]
    assert len(second.input) == 1
    results = second.input[0]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_01Read", "toolu_01Bash"]
    assert isinstance(results[0]["content"], str)
    assert results[1]["content"] == [{"type": "text", "text":
                                      "FAILED tests/test_login.py::test_login - KeyError: "
                                      "'token'\n1 failed in 0.31s"}]
    assert results[1]["is_error"] is True


def test_images_thinking_and_the_chain_through_a_progress_line_are_kept():
    rec = load_recording(CLAUDE)
    image_turn = rec.exchanges[3].input[0]["content"]
    assert image_turn[1]["type"] == "image"
    assert image_turn[1]["source"]["media_type"] == "image/png"
    # the Task call's parent is a progress line: the chain goes through it
    assert rec.exchanges[1].reply["content"][0]["name"] == "Task"


def test_compact_boundary_and_its_summary():
    compaction = load_recording(CLAUDE).compactions[0]
    assert isinstance(compaction, Compaction)
    assert (compaction.by, compaction.trigger, compaction.pre_tokens) == \
        ("claude-code", "auto", 170251)
    assert compaction.stage == "auto_compact"
    assert compaction.summary.startswith("This session is being continued")
    assert compaction.kept == [{"role": "user", "content": compaction.summary}]


def test_skipped_lines_are_counted_by_kind_and_never_replayed():
    rec = load_recording(CLAUDE)
    assert rec.skipped == {"file-history-snapshot": 1, "progress": 1,
                           "queue-operation": 1, "sidechain": 2, "summary": 1,
                           "system:local_command": 1, "unknown type 'mystery-type'": 1}
    text = json.dumps([s.input for s in rec.exchanges] + [s.reply for s in rec.exchanges])
    assert "sidechain output" not in text
    # an isMeta prompt (the local-command caveat) is sent to the API as written
    assert "Caveat:" in json.dumps(rec.exchanges[0].input)
    assert "check_token is called from views.py and api.py." in text  # via the tool result


def test_subagent_transcripts_are_listed_and_open_as_sessions_of_their_own():
    rec = load_recording(CLAUDE)
    assert [p.name for p in rec.subagents] == ["agent-3f9c2a1b.jsonl"]


def test_a_broken_parent_chain_follows_the_longest_chain_and_says_so(tmp_path):
    records = [r for r in lines() if r.get("uuid") != "a5"]  # drop the Task call's line
    rec = load_recording(write(tmp_path, records))
    [notice] = [n for n in rec.notices if n.kind == "broken-chain"]
    assert "longest chain" in notice.message and notice.line is not None
    # the longest chain is the one that ends at the last message, from t3 on
    assert rec.exchanges[-1].reply["content"][0]["text"] == "All 24 tests pass."


def test_a_broken_chain_keeps_the_longer_part_when_the_tail_is_short(tmp_path):
    records = [r for r in lines() if r.get("uuid") != "u3"]  # orphan the last two requests
    rec = load_recording(write(tmp_path, records))
    assert any(n.kind == "broken-chain" for n in rec.notices)
    assert len(rec.exchanges) == 4  # the longer chain, before the compaction


def test_a_rewound_branch_is_left_out(tmp_path):
    records = lines()
    at = next(i for i, r in enumerate(records) if r.get("uuid") == "u2")
    branch = {**records[at], "uuid": "u2-old", "message": {"role": "user",
                                                          "content": "an abandoned prompt"}}
    records.insert(at, branch)
    rec = load_recording(write(tmp_path, records))
    assert "abandoned" not in json.dumps([s.input for s in rec.exchanges])
    assert rec.skipped["off-chain"] == 1


def test_synthetic_api_error_messages_are_not_requests(tmp_path):
    records = lines()
    error = {**records[-2], "uuid": "err", "parentUuid": "a9", "isApiErrorMessage": True,
             "message": {"id": "e", "role": "assistant", "model": "<synthetic>",
                         "content": [{"type": "text", "text": "API Error: 529"}]}}
    rec = load_recording(write(tmp_path, [*records[:-1], error]))
    assert rec.skipped["api-error"] == 1
    assert len(rec.exchanges) == 6


def test_every_exchange_input_is_a_list_of_api_messages():
    for step in load_recording(CLAUDE).steps:
        if isinstance(step, Exchange):
            assert all(m["role"] == "user" for m in step.input)
            assert step.reply["role"] == "assistant"


def test_a_tool_use_line_written_after_a_result_of_the_same_message_joins_its_reply(
        tmp_path):
    records = lines()
    order = {r.get("uuid"): r for r in records}
    # a4 (second tool_use of msg_01A) now comes after t1 (the first result)
    t1 = {**order["t1"], "parentUuid": "a3"}
    a4 = {**order["a4"], "parentUuid": "t1"}
    t2 = {**order["t2"], "parentUuid": "a4"}
    at = records.index(order["a4"])
    records[at:at + 3] = [t1, a4, t2]
    rec = load_recording(write(tmp_path, records))
    first, second = rec.exchanges[:2]
    assert [b["type"] for b in first.reply["content"]] == \
        ["thinking", "text", "tool_use", "tool_use"]
    assert [r["tool_use_id"] for r in second.input[0]["content"]] == \
        ["toolu_01Read", "toolu_01Bash"]
    assert len(rec.exchanges) == 6


def test_a_subagent_transcript_opens_as_a_session_of_its_own():
    [sub] = load_recording(CLAUDE).subagents
    rec = load_recording(sub)
    assert rec.format == "claude-code" and len(rec.exchanges) == 1
    assert rec.exchanges[0].input[0]["content"] == "List every caller of check_token."
    assert "sidechain" not in rec.skipped


def test_a_microcompact_boundary_clears_the_named_results_in_the_originals_history(tmp_path):
    import asyncio

    from core.events import Emitter, Recorder, ReplayStep, Stage
    from core.sources.replay.source import ReplayOptions, ReplaySource

    records = lines()
    at = next(i for i, r in enumerate(records) if r.get("uuid") == "u2")
    micro = {**records[at], "type": "system", "subtype": "microcompact_boundary",
             "uuid": "mc1", "parentUuid": "a6", "content": "Context microcompacted",
             "level": "info", "isMeta": False, "message": None,
             "microcompactMetadata": {"trigger": "auto", "preTokens": 98000,
                                      "tokensSaved": 700,
                                      "compactedToolIds": ["toolu_01Read"],
                                      "clearedAttachmentUUIDs": []}}
    records[at] = {**records[at], "parentUuid": "mc1"}
    records.insert(at, micro)
    recording = load_recording(write(tmp_path, records))
    [micro_step] = [c for c in recording.compactions if c.cleared is not None]
    assert micro_step.stage == "micro_compact" and micro_step.cleared == ["toolu_01Read"]
    events = Recorder()
    source = ReplaySource(recording, ReplayOptions(workdir=tmp_path / "w"))
    assert asyncio.run(source.run(Emitter(sinks=[events])))
    [stage] = [s for s in events.of(Stage) if s.stage == "micro_compact"]
    assert (stage.by, stage.pre_tokens, stage.trigger) == ("claude-code", 98000, "auto")
    assert stage.before_messages == stage.after_messages
    assert stage.before_chars - stage.after_chars > 2_000  # the read result left
    step = events.of(ReplayStep)[3]
    assert step.original_chars < step.ctxlab_chars  # ctxlab kept it (under its limit)
