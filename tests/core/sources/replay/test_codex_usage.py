"""Codex usage lines, wherever a version writes them, end up on the request they paid for.

Real rollouts (test_codex_real.py) show two orders: 0.58 writes a response's
``token_count`` before its items and repeats it when the next request starts; 0.171 writes
it after the tool outputs, repeated, and adds one ``token_usage_record`` per response right
after its items. The property here: any mix of those placements, with any number of
repeats, gives every request exactly its own usage, in order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sources.replay import load_recording

Line = dict[str, Any]


def _line(kind: str, payload: dict[str, Any]) -> Line:
    return {"timestamp": "2026-12-05T03:00:00Z", "type": kind, "payload": payload}


def _usage(n: int) -> dict[str, int]:
    return {"input_tokens": 1000 * n + 7, "cached_input_tokens": 100 * n,
            "output_tokens": 10 + n, "reasoning_output_tokens": n,
            "total_tokens": 1000 * n + 17 + n}


def _total(upto: int) -> dict[str, int]:
    parts = [_usage(n) for n in range(1, upto + 1)]
    return {key: sum(p[key] for p in parts) for key in parts[0]}


def _count(n: int) -> Line:
    return _line("event_msg", {"type": "token_count", "info": {
        "total_token_usage": _total(n), "last_token_usage": _usage(n),
        "model_context_window": 258400}})


def _record(n: int) -> Line:
    return _line("token_usage_record", {"response_id": f"resp_{n}", "usage": _usage(n)})


def _items(n: int, last: bool) -> list[Line]:
    if last:
        return [_line("response_item", {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text",
                                                     "text": f"done {n}"}]})]
    return [_line("response_item", {"type": "reasoning", "summary": [],
                                    "encrypted_content": "gAAAA"}),
            _line("response_item", {"type": "function_call", "name": "exec_command",
                                    "arguments": json.dumps({"cmd": f"echo {n}"}),
                                    "call_id": f"call_{n}"})]


def _output(n: int) -> Line:
    return _line("response_item", {"type": "function_call_output", "call_id": f"call_{n}",
                                   "output": f"{n}\n"})


def rollout(placements: list[tuple[bool, int]], records: bool) -> list[Line]:
    """Responses 1..n; each one's ``token_count`` before its items (True) or after its
    tool output, repeated ``repeats`` times after the output; with records, one
    ``token_usage_record`` right after its items."""
    lines = [_line("session_meta", {"id": "s", "base_instructions": {"text": "sys"}}),
             _line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "go"}]})]
    for index, (before, repeats) in enumerate(placements):
        n, last = index + 1, index == len(placements) - 1
        lines.append(_line("turn_context", {"model": "gpt-5-codex"}))
        lines += [_count(n)] if before else []
        lines += _items(n, last)
        lines += [_record(n)] if records else []
        lines += [] if last else [_output(n)]
        lines += [] if before else [_count(n)]
        lines += [_count(n)] * repeats
    return lines


def write(tmp_path: Path, lines: list[Line]) -> Path:
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def expected(n: int) -> dict[str, int]:
    usage = _usage(n)
    return {"input_tokens": usage["input_tokens"] - usage["cached_input_tokens"],
            "cache_read_input_tokens": usage["cached_input_tokens"],
            "cache_creation_input_tokens": 0, "output_tokens": usage["output_tokens"],
            "reasoning_output_tokens": usage["reasoning_output_tokens"]}


@settings(max_examples=80, deadline=None)
@given(placements=st.lists(st.tuples(st.booleans(), st.integers(0, 2)), min_size=1,
                           max_size=6),
       records=st.booleans())
def test_any_placement_of_the_usage_lines_gives_each_request_its_own(
        tmp_path_factory, placements, records):
    path = write(tmp_path_factory.mktemp("rollout"), rollout(placements, records))
    recording = load_recording(path)
    assert [e.usage for e in recording.exchanges] == \
        [expected(n) for n in range(1, len(placements) + 1)]
    assert not [n for n in recording.notices if n.kind == "usage"]


def test_records_are_the_usage_even_when_token_counts_disagree(tmp_path):
    lines = rollout([(False, 0), (False, 0)], records=True)
    for line in lines:  # a token_count that says something else is not read
        if line["payload"].get("type") == "token_count":
            line["payload"]["info"]["last_token_usage"] = _usage(9)
            line["payload"]["info"]["total_token_usage"] = _usage(9)
    usages = [e.usage for e in load_recording(write(tmp_path, lines)).exchanges]
    assert usages == [expected(1), expected(2)]


def test_a_usage_no_request_takes_is_said(tmp_path):
    lines = [*rollout([(False, 0)], records=False), _count(2)]
    recording = load_recording(write(tmp_path, lines))
    assert recording.exchanges[0].usage == expected(1)
    assert [n.kind for n in recording.notices] == ["usage"]


def test_a_token_count_without_info_is_no_usage(tmp_path):
    lines = rollout([(True, 0)], records=False)
    lines.insert(2, _line("event_msg", {"type": "token_count", "info": None}))
    assert load_recording(write(tmp_path, lines)).exchanges[0].usage == expected(1)
