"""The largest items of a message list: sizes, groups, ages and who touched each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.compact.breakdown import message_breakdown
from core.compact.pointers import earlier_text, wrapper_text
from core.measure import json_chars
from core.sources.replay.original import CLEARED
from core.sources.watch.openai_requests import history
from core.views.items import Ages, items_of, largest

CODEX = Path(__file__).parents[2] / "fixtures" / "watch" / "codex-0.171.0-request.json"
BIG = "x" * 5000


def read(call_id: str, path: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}]}


def result(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": content}]}


def test_a_file_read_twice_is_one_group_with_its_count_and_total():
    messages = [{"role": "user", "content": "look at a.py"},
                read("t1", "a.py"), result("t1", BIG),
                read("t2", "b.py"), result("t2", "short"),
                read("t3", "a.py"), result("t3", BIG + "\nnew line")]
    top = largest(messages, 3)
    first = top[0]
    assert (first.kind, first.tool, first.target, first.count) == ("file_read", "Read", "a.py", 2)
    assert first.total_chars == json_chars(BIG) + json_chars(BIG + "\nnew line")
    assert first.chars == json_chars(BIG + "\nnew line")  # the largest copy's
    assert first.message == 6
    assert first.tokens > 0


def test_same_content_is_grouped_by_digest_and_tokens_follow_the_ratio():
    messages = [{"role": "user", "content": BIG}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": BIG}]
    top = largest(messages, 1, chars_per_token=2.5)
    assert (top[0].kind, top[0].count, top[0].total_chars) == ("text", 2, 2 * json_chars(BIG))
    assert top[0].tokens == round(2 * json_chars(BIG) / 2.5)


def test_pointers_name_the_stage_that_wrote_them():
    messages = [read("t1", "a.py"),
                result("t1", earlier_text(".ctxlab/tool-results/t1.txt")),
                read("t2", "b.py"),
                result("t2", wrapper_text(".ctxlab/tool-results/t2.txt", "preview"))]
    by_call = {i.call_id: i for i in items_of(messages) if i.kind == "pointer"}
    assert by_call["t1"].touched == "micro_compact"
    assert by_call["t2"].touched == "tool_result_budget"
    assert by_call["t2"].target == "b.py"  # still named by its call


def test_a_result_claude_code_cleared_is_the_agents_doing():
    messages = [read("t1", "a.py"), result("t1", CLEARED)]
    cleared = [i for i in items_of(messages) if i.call_id == "t1" and i.kind != "tool_call"]
    assert [(i.kind, i.touched, i.content) for i in cleared] == \
        [("cleared", "Claude Code", CLEARED)]


def test_thinking_images_and_summaries_are_items():
    messages = [
        {"role": "user", "content": "This session is being continued from a previous "
                                    "conversation that ran out of context. " + BIG},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm " * 100,
                                           "signature": "s"}]},
        {"role": "user", "content": [{"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "A" * 900}}]}]
    kinds = {i.kind: i for i in items_of(messages)}
    assert kinds["summary"].touched == "Claude Code"
    assert kinds["thinking"].content.startswith("hmm")
    # sized as the breakdown (the events' categories) sizes them
    assert kinds["thinking"].chars == message_breakdown(messages[1])["thinking"]
    assert kinds["image"].chars == message_breakdown(messages[2])["images"]


def test_a_codex_responses_body_is_read_item_by_item():
    body = json.loads(CODEX.read_text(encoding="utf-8"))["body"]
    entries = [
        *history(body),
        {"type": "function_call", "call_id": "c1", "name": "shell",
         "arguments": json.dumps({"command": ["cat", "README.md"]})},
        {"type": "function_call_output", "call_id": "c1", "output": BIG * 10},
        {"type": "reasoning", "summary": [], "encrypted_content": "E" * 3000}]
    top = largest(entries, 3)
    assert top[0].kind == "tool_result" and top[0].tool == "shell"
    assert (top[0].target, top[0].chars) == ("cat README.md", json_chars(BIG * 10))
    roles = {i.role for i in items_of(entries)}
    assert {"developer", "user", "function_call", "reasoning"} <= roles
    assert any(i.kind == "thinking" for i in items_of(entries))


def test_ages_count_requests_since_the_content_first_appeared():
    ages = Ages()
    first = [{"role": "user", "content": BIG}]
    ages.observe(first)
    second = [*first, {"role": "assistant", "content": "ok " * 10}]
    ages.observe(second)
    third = [*second, {"role": "user", "content": "y" * 100}]
    ages.observe(third)
    by_kind = {i.content[:1]: i for i in largest(third, 5, ages=ages)}
    assert (by_kind["x"].first_request, by_kind["x"].age) == (1, 2)
    assert (by_kind["o"].first_request, by_kind["o"].age) == (2, 1)
    assert (by_kind["y"].first_request, by_kind["y"].age) == (3, 0)
