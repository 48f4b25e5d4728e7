"""``tui.wide_chars``: the characters it passes over unmeasured, and the spans it finds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip

from tui.wide_chars import NARROW, NARROW_RANGES, wide_spans


def test_every_character_passed_over_is_one_cell_wide():
    wide = [hex(c) for a, b in NARROW_RANGES for c in range(a, b + 1) if cell_len(chr(c)) != 1]
    assert wide == []


def test_the_pattern_passes_over_exactly_those_ranges():
    inside = {c for a, b in NARROW_RANGES for c in range(a, b + 1)}
    for c in range(0x3000):  # every range lies below
        assert bool(NARROW(chr(c))) == (c in inside), hex(c)


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
