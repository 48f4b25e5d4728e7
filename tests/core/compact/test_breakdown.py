"""The one category breakdown: its parts add up to the measure exactly, whatever the history,
each shape lands in its category, and the cache splits a message once."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.compact.breakdown import (
    CATEGORIES,
    MESSAGE_CATEGORIES,
    BreakdownCache,
    message_breakdown,
    prompt_breakdown,
    section_group,
    text_kind,
)
from core.compact.pointers import archive_marker_text, earlier_text, wrapper_text
from core.compact.summary import summary_message
from core.measure import LARGE_STRING, json_chars

POINTER = earlier_text(".task_outputs/tool-results/t2.txt")
WRAPPER = wrapper_text(".task_outputs/tool-results/t3.txt", "first lines…")
MARKER = archive_marker_text(3, ".transcripts/transcript_1.jsonl")
SUMMARY = summary_message("Compacted", "fix auth", "read a.py", ".transcripts/t.jsonl")

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Refactor auth, \"carefully\"\n"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "x = 1\n" * 50},
        {"type": "tool_result", "tool_use_id": "t2", "content": POINTER},
        {"type": "tool_result", "tool_use_id": "t3", "content": WRAPPER},
        {"type": "tool_result", "tool_use_id": "t4", "content": [
            {"type": "text", "text": "a chart"},
            {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}}]}]},
    {"role": "user", "content": MARKER},
    SUMMARY,
]


def test_each_shape_lands_in_its_category() -> None:
    totals = BreakdownCache().totals(HISTORY)
    blocks = HISTORY[2]["content"]
    assert totals["pointers"] == json_chars(POINTER) + json_chars(WRAPPER)
    assert totals["summaries"] == json_chars(MARKER) + json_chars(SUMMARY["content"])
    assert totals["tool_results"] == json_chars(blocks[0]["content"]) + \
        json_chars(blocks[3]["content"][0])
    assert totals["images"] == json_chars(blocks[3]["content"][1])
    assert totals["thinking"] == json_chars(HISTORY[1]["content"][0])
    assert totals["tool_calls"] == json_chars(HISTORY[1]["content"][2])
    assert totals["text"] == json_chars(HISTORY[0]["content"]) + json_chars("Reading.")
    assert set(totals) == set(MESSAGE_CATEGORIES)
    assert (text_kind(POINTER), text_kind(WRAPPER), text_kind(MARKER)) == \
        ("pointer", "wrapper", "marker")
    assert text_kind(SUMMARY["content"], SUMMARY) == "summary"


def test_the_parts_add_up_to_the_course_measure_exactly() -> None:
    totals = BreakdownCache().totals(HISTORY)
    assert sum(totals.values()) == json_chars(HISTORY) == \
        len(json.dumps(HISTORY, ensure_ascii=False))
    assert all(value >= 0 for value in totals.values())
    assert sum(BreakdownCache().totals([]).values()) == json_chars([]) == 2


def test_a_large_result_is_split_exactly_too() -> None:
    big = "line \"quoted\"\t\n" * (LARGE_STRING // 8)
    message = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t9", "content": big}]}
    parts = message_breakdown(message)
    assert parts["tool_results"] == len(json.dumps(big, ensure_ascii=False))
    assert sum(parts.values()) == len(json.dumps(message, ensure_ascii=False))


def test_the_cache_splits_each_message_once_by_identity() -> None:
    cache = BreakdownCache()
    cache.totals(HISTORY)
    first = dict(cache._known)
    cache.totals(HISTORY)
    assert all(cache._known[k][1] is first[k][1] for k in first)
    changed = {**HISTORY[0], "content": "other"}  # a copy, as the engine makes one
    totals = cache.totals([changed, *HISTORY[1:]])
    assert sum(totals.values()) == json_chars([changed, *HISTORY[1:]])


def test_the_running_totals_stay_those_of_a_fresh_count_whatever_the_list_becomes() -> None:
    """The cache keeps a running sum and only adds what joined and takes out what left;
    snip (the front dropped), micro (a message in the middle copied), an append, the same
    message twice, an empty list, and everything back: each time, the totals are those a
    fresh cache counts, and they add up to the measure."""
    changed = {**HISTORY[2], "content": "[cleared]"}
    lists = [HISTORY, HISTORY[2:], [*HISTORY[2:], {"role": "assistant", "content": "ok"}],
             [HISTORY[0], HISTORY[1], changed, *HISTORY[3:]], [HISTORY[0], HISTORY[0]],
             [], HISTORY, list(reversed(HISTORY)), [changed]]
    cache = BreakdownCache()
    for messages in lists:
        totals = cache.totals(messages)
        assert totals == BreakdownCache().totals(messages)
        assert sum(totals.values()) == json_chars(messages)


@given(st.lists(st.integers(min_value=0, max_value=len(HISTORY) - 1), max_size=12),
       st.lists(st.integers(min_value=0, max_value=len(HISTORY) - 1), max_size=12))
def test_any_two_lists_in_a_row_are_counted_as_fresh(first: list[int],
                                                     second: list[int]) -> None:
    cache = BreakdownCache()
    cache.totals([HISTORY[i] for i in first])
    messages = [HISTORY[i] for i in second]
    assert cache.totals(messages) == BreakdownCache().totals(messages)
    assert sum(cache.totals(messages).values()) == json_chars(messages)


def test_the_system_prompt_adds_up_to_its_length_with_the_joins_as_system() -> None:
    sections = ({"name": "identity", "chars": 90, "category": "system"},
                {"name": "Memory rules", "chars": 300, "category": "memory"},
                {"name": "Relevant memory records", "chars": 120, "category": "memory"},
                {"name": "rules:CTXLAB.md", "chars": 200, "category": "pinned"},
                {"name": "worklog", "chars": 50})  # an old log: no category
    system_chars = 90 + 300 + 120 + 200 + 50 + 2 * 4  # joined by blank lines
    sizes = prompt_breakdown(sections, system_chars)
    assert sizes == {"system": 98, "memory": 300, "recalled": 120, "pinned": 250}
    assert sum(sizes.values()) == system_chars
    assert [section_group(s) for s in sections] == \
        ["system", "memory", "recalled", "pinned", "pinned"]
    assert set(CATEGORIES) >= set(sizes)


# -- any history ----------------------------------------------------------------------------

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
strings = texts | st.sampled_from([POINTER, WRAPPER, MARKER, SUMMARY["content"], ""])
values = st.recursive(st.none() | st.booleans() | st.integers() | texts,
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(texts, inner, max_size=3), max_leaves=6)
result_items = st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "document"]),
                                      "text": texts}) | values
blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": strings}),
    st.fixed_dictionaries({"type": st.sampled_from(["tool_use", "server_tool_use"]),
                           "id": texts, "input": st.dictionaries(texts, values, max_size=2)}),
    st.fixed_dictionaries({"type": st.sampled_from(["tool_result", "web_search_tool_result"]),
                           "tool_use_id": texts},
                          optional={"content": strings | st.lists(result_items, max_size=3)
                                    | values}),
    st.fixed_dictionaries({"type": st.sampled_from(
        ["thinking", "redacted_thinking", "image", "document", "compaction", "other"]),
        "data": texts}),
    values,  # not a block at all
)
messages = st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant"]),
    "content": strings | st.lists(blocks, max_size=4) | values,
})


@given(st.lists(messages | values, max_size=5))
def test_any_history_splits_into_parts_that_add_up_to_json_chars(history) -> None:
    for message in history:
        parts = message_breakdown(message)
        assert sum(parts.values()) == json_chars(message)
        assert all(value >= 0 for value in parts.values())
    totals = BreakdownCache().totals(history)
    assert sum(totals.values()) == len(json.dumps(history, ensure_ascii=False))
    assert all(value >= 0 for value in totals.values())
