"""Interleaved rounds: how every bench compares runs made side by side.

On a shared machine the neighbours' load and the state of the page cache change from second
to second, so two runs can only be compared when they are made side by side: each round
runs every compared run once, in an order that rotates from round to round (A B C, B C A,
C A B, …), and a row reports the median and the best of the per-round ratios. The load
average is noted with the figures, since absolute times still move with it.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterator, Sequence
from typing import TypeVar

Name = TypeVar("Name")


def rotations(names: Sequence[Name], rounds: int) -> Iterator[tuple[int, list[Name]]]:
    """Each round's number and the order its runs go in, rotated by one every round."""
    names = list(names)
    for turn in range(rounds):
        shift = turn % len(names)
        yield turn, names[shift:] + names[:shift]


def per_round(top: Sequence[float], bottom: Sequence[float]) -> tuple[float, float, float]:
    """Median, best (lowest) and worst of ``top[i] / bottom[i]`` over the rounds."""
    ratios = sorted(a / b for a, b in zip(top, bottom, strict=True))
    return statistics.median(ratios), ratios[0], ratios[-1]


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15-minute load averages (None where the system has none)."""
    try:
        return os.getloadavg()
    except OSError:
        return None
