"""Counts agree with their nouns in every English line the command line and notices print."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.wording import plural
from tui.cli.event_lines import describe_event


@pytest.mark.parametrize(("n", "expected"), [(0, "0 messages"), (1, "1 message"),
                                             (2, "2 messages"), (1500, "1,500 messages")])
def test_plural(n, expected):
    assert plural(n, "message") == expected


def test_irregular_plurals_are_given():
    assert plural(2, "summary", "summaries") == "2 summaries"
    assert plural(1, "summary", "summaries") == "1 summary"


def test_the_log_lines_say_one_in_the_singular():
    stage = SimpleNamespace(type="stage", stage="compact_history", by="ctxlab",
                            before_chars=900, after_chars=100, before_messages=8,
                            after_messages=1, files=["t.jsonl"])
    assert describe_event(stage).endswith("8 → 1 message, wrote 1 file")
    end = SimpleNamespace(type="run_end", ok=True, turns=1)
    assert describe_event(end) == "run end: ok after 1 turn"
    listing = SimpleNamespace(type="archive_listing",
                              files=[{"kind": "transcript"}, {"kind": "result"}])
    assert describe_event(listing) == "archive already holds 1 transcript and 1 result file"
