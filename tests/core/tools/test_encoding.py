"""``shown`` answers as the surrogate search would, on any text, without searching the
texts that cannot hold a surrogate (core/tools/encoding.py)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from core.tools.encoding import _escape, shown

SURROGATE = re.compile("[\ud800-\udfff]")

# ASCII, Latin-1, wide characters and surrogates (lone, escaped bytes and pairs' halves)
TEXT = st.text(st.one_of(st.characters(max_codepoint=0x7F),
                         st.characters(min_codepoint=0x80, max_codepoint=0xFF),
                         st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80),
                         st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF,
                                       categories=["Cs"]),
                         st.characters(min_codepoint=0x1F600, max_codepoint=0x1F64F)))


@given(TEXT)
def test_shown_escapes_every_surrogate_and_changes_nothing_else(text: str) -> None:
    result = shown(text)
    assert result == SURROGATE.sub(_escape, text)
    result.encode("utf-8")  # always encodable


def test_text_without_a_surrogate_comes_back_as_it_is() -> None:
    for text in ("plain ascii\n" * 1000, "café " * 1000, "字符 " * 1000, "😀" * 10):
        assert shown(text) is text
    assert shown("caf\udcff.txt") == "caf\\xff.txt"
    assert shown("lone \ud800") == "lone \\ud800"
