"""Which messages of a request the previous request already held, found without a Python
loop over the whole history.

Every strategy sends, at each request, mostly what it sent the time before: the same
message objects (nothing changes a message in place), with a turn added at the end, a
result masked or cleared near it, a few messages snipped after the head, or the front cut
away. What is measured or read of a message can then be carried over by position. Runs of
shared messages are matched with C loops (``map(is_)``); only where a run breaks is a
message looked up: first a few places ahead (a snip, a replacement), then by identity
(a cut of any length).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

NEAR = 16  # how far ahead a broken run is looked for before an identity index is built


def _run(previous: Sequence[Any], p: int, current: Sequence[Any], c: int) -> int:
    """How many messages from ``previous[p:]`` and ``current[c:]`` are the same objects."""
    same = list(map(is_, previous[p:], current[c:]))
    return same.index(False) if False in same else len(same)


def carried(previous: Sequence[Any], current: Sequence[Any]) -> list[tuple[int, int]]:
    """``current`` as spans ``(start, length)``: the next ``length`` messages are
    ``previous[start:start + length]``, or new ones when ``start`` is -1."""
    spans: list[tuple[int, int]] = []
    index: dict[int, int] | None = None
    p = c = 0
    while c < len(current):
        run = _run(previous, p, current, c)
        if run:
            spans.append((p, run))
            p, c = p + run, c + run
            continue
        if p >= len(previous):  # the rest is new (a turn appended)
            spans.append((-1, len(current) - c))
            break
        message = current[c]
        near = next((q for q in range(p, min(p + NEAR, len(previous)))
                     if previous[q] is message), None)
        if near is None:
            if index is None:
                index = {id(m): i for i, m in enumerate(previous)}
            near = index.get(id(message))
            if near is not None and previous[near] is not message:
                near = None
        if near is None:
            spans.append((-1, 1))
            c += 1
        else:
            p = near
    return spans
