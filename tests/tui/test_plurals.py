"""A count of one reads in the singular, in every workbench string that counts something.

"1 messages", "1 compactions" and "side call(s)" were found on screen; each string with a
count-noun now has a ``.one`` form (or takes a counted phrase, ``count.*``), and Chinese,
which has no plural, repeats its text there.
"""

from __future__ import annotations

import re

import pytest

from tui.i18n import set_language, t
from tui.locales import CATALOGS

ONE = [  # (id, fields, English with a count of one)
    ("conv.stage_msgs", dict(before=8, after=1, n=1), "8 → 1 message"),
    ("conv.consolidated", dict(before=3, after=1, n=1), "memory consolidated: 3 → 1 record"),
    ("inspector.summary", dict(before=900, after=100, before_msgs=8, after_msgs=1, n=1),
     "900 → 100 chars · 8 → 1 message"),
    ("why.did", dict(before=900, after=100, before_msgs=8, after_msgs=1, n=1),
     "900 → 100 chars · 8 → 1 message"),
    ("replay.side", dict(n=1), "  1 side call kept apart (titles, probes, count_tokens)"),
    ("replay.limits.sizes", dict(chars=20_000, messages=1, n=1), "20,000 chars, 1 message"),
    ("compare.chart_figures", dict(peak=5, mean=5, calls=1, n=1), "peak 5 · mean 5 · 1 call"),
    ("viewer.bytes", dict(n=1), "1 byte"),
    ("meter.usage", dict(n=1), "1 input token (API usage)"),
    ("replay.subagent", dict(kind="Explore", about="", n=1, tokens=900,
                             compactions=t("count.compactions", n=1)),
     "Explore: 1 request, 1 compaction, 900 tokens in"),
    ("replay.sizes", dict(chars=438, tokens="", msgs=t("count.msgs", n=1), cchars=500,
                          cmsgs=t("count.msgs", n=2)),
     "original 438 chars in 1 msg · ctxlab 500 chars in 2 msgs"),
]


@pytest.mark.parametrize(("key", "fields", "expected"), ONE, ids=[k for k, _, _ in ONE])
def test_a_count_of_one_is_singular(key, fields, expected):
    assert t(key, **fields) == expected


def test_no_string_leaves_the_plural_to_the_reader():
    """``call(s)``: a form to fill in, not a sentence."""
    for lang, catalog in CATALOGS.items():
        assert [k for k, text in catalog.items() if re.search(r"\w\(s\)", text)] == [], lang


def test_chinese_repeats_its_text_for_one():
    try:
        set_language("zh")
        assert t("conv.stage_msgs", before=8, after=1, n=1) == "8 → 1 条消息"
        assert t("count.compactions", n=1) == "1 次压缩"
    finally:
        set_language("en")
