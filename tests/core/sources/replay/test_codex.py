"""Codex rollouts: items become Messages-API blocks, token_count ends each request."""

from __future__ import annotations

import json

from core.sources.replay import load_recording
from tests.core.sources.replay.conftest import CODEX, FIXTURES


def test_requests_are_cut_at_each_token_count():
    rec = load_recording(CODEX)
    assert rec.format == "codex" and rec.agent == "codex"
    assert [type(s).__name__ for s in rec.steps] == \
        ["Exchange"] * 3 + ["Compaction"] + ["Exchange"] * 2
    assert rec.model == "gpt-5-codex"
    assert rec.system == "Follow AGENTS.md: run the tests before you finish."


def test_reasoning_and_a_function_call_make_one_reply():
    first = load_recording(CODEX).exchanges[0]
    thinking, use = first.reply["content"]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == "**Running the failing test**"
    assert thinking["signature"].startswith("gAAAAABo")  # sent back, so it counts
    assert use == {"type": "tool_use", "id": "call_K1t0sRQ3", "name": "shell",
                   "input": {"command": ["bash", "-lc", "pytest tests/test_login.py -x"],
                             "workdir": "/home/dev/shop"}}


def test_outputs_become_tool_results_answering_their_call():
    rec = load_recording(CODEX)
    result = rec.exchanges[1].input[0]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "call_K1t0sRQ3"
    assert "KeyError" in result["content"]
    patch = rec.exchanges[1].reply["content"][0]
    assert patch["name"] == "apply_patch" and patch["input"]["input"].startswith("*** Begin")


def test_token_count_usage_is_translated_to_the_messages_api_terms():
    usage = load_recording(CODEX).exchanges[0].usage
    assert usage == {"input_tokens": 2048, "cache_read_input_tokens": 3072,
                     "cache_creation_input_tokens": 0, "output_tokens": 96,
                     "reasoning_output_tokens": 64}


def test_compacted_line_is_the_agents_compaction_with_its_summary():
    compaction = load_recording(CODEX).compactions[0]
    assert compaction.by == "codex" and compaction.pre_tokens == 5600
    assert compaction.summary.startswith("Summary: the user asked why")
    # 0.58 writes only the summary: Codex went on with the session's user messages and it
    [kept] = compaction.kept
    texts = [b["text"] for b in kept["content"]]
    assert texts[-1] == compaction.summary and "Why does test_login fail?" in texts


def test_images_and_skipped_items():
    rec = load_recording(CODEX)
    prompt = rec.exchanges[3].input[0]["content"]
    assert prompt[0] == {"type": "text", "text": "Rerun the suite."}
    assert prompt[1]["type"] == "image" and prompt[1]["source"]["type"] == "base64"
    assert rec.skipped["response_item:web_search_call"] == 1
    assert rec.skipped["event_msg:user_message"] == 1


def _with_cache_writes(tmp_path):
    """The fixture's rollout as newer Codex versions write it: ``last_token_usage`` also
    counts ``cache_write_input_tokens``, a part of ``input_tokens`` like the cached input."""
    lines = []
    for line in CODEX.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        info = data["payload"].get("info") if data["type"] == "event_msg" else None
        if isinstance(info, dict):
            last = info["last_token_usage"]
            uncached = last["input_tokens"] - last["cached_input_tokens"]
            last["cache_write_input_tokens"] = uncached // 2
        lines.append(json.dumps(data))
    path = tmp_path / CODEX.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cache_writes_are_cache_creation_not_plain_input(tmp_path):
    rec = load_recording(_with_cache_writes(tmp_path))
    usage = rec.exchanges[0].usage  # input 5120, of which 3072 cached and 1024 written
    assert (usage["input_tokens"], usage["cache_creation_input_tokens"],
            usage["cache_read_input_tokens"]) == (1024, 1024, 3072)


def test_a_compaction_counts_the_cache_writes_of_the_request_before_it(tmp_path):
    compaction = load_recording(_with_cache_writes(tmp_path)).compactions[0]
    assert compaction.pre_tokens == 5600  # the whole input: uncached, written and read


def _remote_with_the_item(tmp_path, keep_compacted: bool):
    """The real remote-compaction rollout with its ``compaction`` item also written as a
    ``response_item`` of its own just before ``compacted`` (or instead of it)."""
    source = FIXTURES / "codex-0.171.0" / "remote-compaction.jsonl"
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if data["type"] == "compacted":
            sealed = data["payload"]["replacement_history"][-1]
            lines.append(json.dumps({"timestamp": data["timestamp"], "type": "response_item",
                                     "payload": sealed}))
            if not keep_compacted:
                continue
        lines.append(line)
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_compaction_item_and_the_compacted_line_after_it_are_one_compaction(tmp_path):
    rec = load_recording(_remote_with_the_item(tmp_path, keep_compacted=True))
    [compaction] = rec.compactions
    assert compaction.kept[-1]["content"][-1]["type"] == "compaction"
    assert compaction.usage["input_tokens"] == 1807  # the compaction call's, once
    assert len(rec.exchanges) == 4


def test_a_compaction_item_alone_is_the_compaction_with_the_prompts_kept(tmp_path):
    rec = load_recording(_remote_with_the_item(tmp_path, keep_compacted=False))
    [compaction] = rec.compactions
    [kept] = compaction.kept
    kinds = [b["type"] for b in kept["content"]]
    assert kinds == ["text", "text", "compaction"]  # environment, prompt, sealed summary
    assert compaction.summary.startswith("Codex's summary is encrypted")
