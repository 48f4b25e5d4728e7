"""``tui.wide_chars``: the characters it passes over unmeasured, and the spans it finds."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip

from tui.wide_chars import NARROW, wide_spans


def ranges() -> list[tuple[int, int]]:
    """The character ranges of :data:`NARROW`, read from its pattern."""
    body = NARROW.__self__.pattern[1:-2]  # "[…]*"
    return [(ord(a), ord(b)) for a, b in re.findall(r"(.)-(.)", body, re.DOTALL)]


def test_every_character_passed_over_is_one_cell_wide():
    found = ranges()
    assert len(found) == 8
    wide = [hex(c) for a, b in found for c in range(a, b + 1) if cell_len(chr(c)) != 1]
    assert wide == []


def measured(strip: Strip) -> list[tuple[int, int]]:
    """Every character measured, as before the narrow ones were passed over."""
    spans, x = [], 0
    for segment in strip:
        if segment.control:
            continue
        for char in segment.text:
            width = cell_len(char)
            if width > 1:
                spans.append((x, x + width))
            x += width
    return spans


ALPHABET = "ab ~\u00e9\u00b7\u03a9\u2192\u2026\u258c\u2500\u2801字符命令\u0301\u200b😀\uff21"


@given(st.lists(st.text(alphabet=ALPHABET, max_size=12), max_size=6))
def test_the_spans_are_those_of_measuring_every_character(texts):
    strip = Strip([Segment(text) for text in texts])
    assert wide_spans(strip) == measured(strip)
