"""Visibility reads only what changed since the last check: the answers must be those of a
fresh read of the same messages, whatever changed (the end, the middle, the front)."""

from __future__ import annotations

from typing import Any

from core.whatif.facts import Visibility, digest
from core.whatif.model import Fact


def result(n: int, text: str) -> dict[str, Any]:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}]}


def reread(n: int, needed_at: int) -> Fact:
    return Fact(f"t{n}", "Read", n, needed_at, "reread", f"f{n}.py", digest=digest(f"r{n}"))


def test_a_check_after_any_change_answers_as_a_fresh_read() -> None:
    facts = [reread(n, at) for at in range(2, 7) for n in (1, 2, 3)]
    history = [result(1, "r1"), result(2, "r2"), result(3, "r3")]
    sends = [
        history,
        [*history, result(4, "r4")],  # a turn appended
        [history[0], result(2, "[masked]"), history[2], result(4, "r4")],  # the middle
        [result(9, "summary"), history[2]],  # a compaction at the front
        [result(9, "summary"), history[2], result(1, "r1")],  # t1 back, a new message
    ]
    following = Visibility(facts)
    for at, sent in enumerate(sends, 2):
        fresh = Visibility(facts).check(at, sent)
        assert following.check(at, sent) == fresh
    assert [c.visible for c in Visibility(facts).check(4, sends[2])] == [True, False, True]
