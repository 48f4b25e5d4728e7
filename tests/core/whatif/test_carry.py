"""``carried``: every span it reports is the same objects in both requests, every message
it calls new is in no place of the previous request, and the spans cover the request."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.whatif.carry import carried

EDITS = st.lists(st.tuples(st.sampled_from(["append", "drop", "replace", "cut", "snip"]),
                           st.integers(0, 1_000)), max_size=6)


def edited(previous: list[Any], edits: list[tuple[str, int]]) -> list[Any]:
    current = list(previous)
    for edit, at in edits:
        where = at % len(current) if current else 0
        if edit == "append":
            current.append({"new": at})
        elif edit == "drop" and current:
            del current[where]
        elif edit == "replace" and current:
            current[where] = {"masked": at}
        elif edit == "cut" and current:
            current = [{"marker": at}, *current[where:]]
        elif edit == "snip" and len(current) > 6:
            current = [*current[:3], {"snip": at}, *current[3 + 1 + at % 3:]]
    return current


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), EDITS)
def test_spans_are_the_shared_messages_and_only_them(size: int,
                                                     edits: list[tuple[str, int]]) -> None:
    previous = [{"message": n} for n in range(size)]
    current = edited(previous, edits)
    c = 0
    for start, length in carried(previous, current):
        assert length > 0
        for offset in range(length):
            message = current[c + offset]
            if start >= 0:
                assert previous[start + offset] is message
            else:
                assert all(old is not message for old in previous)
        c += length
    assert c == len(current)


def test_a_snip_after_the_head_carries_everything_but_its_marker() -> None:
    previous = [{"n": n} for n in range(10)]
    current = [*previous[:3], {"marker": 1}, *previous[6:], {"n": 10}]
    assert carried(previous, current) == [(0, 3), (-1, 1), (6, 4), (-1, 1)]
