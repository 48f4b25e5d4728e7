"""Every command fails in one line, whatever the message quotes."""

from __future__ import annotations

import pytest

from tui.cli.failure import fail, one_line


def test_newlines_and_lone_surrogates_are_escaped_so_the_line_stays_one(capsys):
    assert fail("ctxlab watch", "/w/.ctxlab is a link (to /x\nrm -rf ~\ud800)", 2) == 2
    err = capsys.readouterr().err
    assert err == "ctxlab watch: /w/.ctxlab is a link (to /x\\nrm -rf ~\\ud800)\n"


@pytest.mark.parametrize("text", ["plain", "é and 中文", "tab\tstays"])
def test_printable_text_is_unchanged(text):
    assert one_line(text) == text
