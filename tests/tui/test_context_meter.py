"""The Context meter's arithmetic: categories add up exactly, the bar marks the limits."""

from __future__ import annotations

from core.config import Thresholds
from core.measure import json_chars
from tui.widgets.context_meter import CategoryCache, message_categories, meter_bar

HISTORY = [
    {"role": "user", "content": "Refactor auth, \"carefully\"\n"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "x = 1\n" * 50},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": "[Earlier tool result saved at .task_outputs/tool-results/t2.txt]"}]},
    {"role": "user", "content": "[3 messages archived at .transcripts/transcript_1.jsonl]"},
]


def test_categories_add_up_to_the_course_measure_exactly() -> None:
    totals, chars = CategoryCache().totals(HISTORY)
    assert chars == json_chars(HISTORY) == sum(totals.values())
    assert totals["pointers & previews"] == json_chars(HISTORY[2]["content"][1]["content"])
    assert totals["summaries & markers"] == json_chars(HISTORY[3]["content"])
    for message in HISTORY:
        assert sum(message_categories(message).values()) == json_chars(message)


def test_cache_measures_each_message_once_by_identity() -> None:
    cache = CategoryCache()
    cache.totals(HISTORY)
    first = dict(cache._seen)
    cache.totals(HISTORY)
    assert all(cache._seen[k][1] is first[k][1] for k in first)


def test_bar_marks_target_and_trigger() -> None:
    limits = Thresholds(context_limit=1000)
    text = meter_bar(500, limits, width=50).plain
    assert len(text) == 50
    assert text.index("┊") == 32 and text.index("│") == 40  # 800 and 1000 of 1250
    assert meter_bar(5000, limits, width=50).plain.count("█") == 48  # scale grows past 125%
