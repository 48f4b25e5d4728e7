"""The report's "What if" section: its table's numbers are the WhatIf's, its SVG has one line
per strategy at each request's tokens (thinned to peaks on a long session), it stays small,
and a report without a what-if has no section and says nothing of one."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

from core.report.svg import Frame, y_scale
from core.report.whatif import POINTS, peak_points, whatif_section, whatif_svg
from core.usage import Usage
from core.whatif.model import RequestCost, WhatIf
from core.whatif.palette import STRATEGY_COLOURS
from tests.core.report.whatif_sample import sample_whatif

ROW = re.compile(r"<tr>((?:<td>.*?</td>)+)</tr>")
CELL = re.compile(r"<td>(.*?)</td>")
LINE = re.compile(r'<polyline class="series" data-strategy="([^"]+)" data-requests="(\d+)" '
                  r'data-points="(\d+)" stroke="([^"]+)" points="([^"]+)">')


def number(text: str) -> int:
    return int(text.replace(",", ""))


def table_rows(html: str) -> dict[str, list[str]]:
    table = html[html.index('<table class="whatif">'):html.index("</table>")]
    rows = [[unescape(c) for c in CELL.findall(row)] for row in ROW.findall(table)]
    return {row[0]: row[1:] for row in rows}


def test_the_tables_numbers_are_the_whatifs() -> None:
    whatif = sample_whatif()
    rows = table_rows(whatif_section(whatif))
    assert list(rows) == [run.name for run in whatif.strategies]
    for run in whatif.strategies:
        billed, cache, cost, peak, compactions, left, facts, rereads = rows[run.name]
        assert number(billed) == run.billed_input == sum(
            r.usage.billed_input for r in run.requests) + run.side.billed_input
        assert int(cache.rstrip("%")) == round(run.cache_read_share * 100)
        assert cost == ("—" if run.cost is None else f"${run.cost:.4f}")
        assert number(peak) == run.peak_tokens
        assert number(compactions) == run.compactions
        assert [number(n) for n in left.split("/")] == [run.results_left,
                                                          run.results_recoverable]
        assert [number(n) for n in facts.split("/")] == [run.facts_kept, len(run.facts)]
        assert number(rereads) == run.rereads_after_drop


def test_the_note_and_each_lesson_are_said() -> None:
    whatif = sample_whatif()
    html = unescape(whatif_section(whatif))
    assert whatif.note in html
    for run in whatif.strategies:
        assert f"<b>{run.name}</b>: {run.lesson}" in html


def test_the_svg_has_one_line_per_strategy_at_each_requests_tokens() -> None:
    whatif = sample_whatif()
    svg = whatif_svg(whatif)
    lines = LINE.findall(svg)
    assert [name for name, *_ in lines] == [run.name for run in whatif.strategies]
    frame = Frame(6, y_scale([*(run.peak_tokens for run in whatif.strategies), 20_000]))
    for (name, requests, points, colour, drawn), run in zip(lines, whatif.strategies,
                                                           strict=True):
        assert int(requests) == int(points) == len(run.requests)
        assert colour == STRATEGY_COLOURS[name]  # the workbench's colour
        assert drawn == " ".join(f"{frame.x(i):.0f},{frame.y(r.tokens):.0f}"
                                 for i, r in enumerate(run.requests))
    assert "model window 20,000" in svg


def test_a_long_sessions_lines_are_thinned_to_their_peaks_and_the_section_stays_small() -> None:
    def long_run(run_index: int) -> tuple[RequestCost, ...]:
        return tuple(RequestCost(index=i, chars=0, tokens=1_000 + (i * 37 + run_index) % 9_000,
                                 usage=Usage(input=500, cache_read=500, output=10))
                     for i in range(1, 3_001))

    base = sample_whatif()
    runs = tuple(replace(base.strategies[n % 3], name=name, requests=long_run(n))
                 for n, name in enumerate(STRATEGY_COLOURS))
    whatif: WhatIf = replace(base, requests=3_000, strategies=runs)
    html = whatif_section(whatif)
    lines = LINE.findall(html)
    assert len(lines) == 7
    assert all(int(points) == POINTS and int(requests) == 3_000
               for _, requests, points, _, _ in lines)
    assert f"each 1/{POINTS} of its requests, at that request's place" in html
    assert len(html.encode()) < 11_000  # a few kB, however long the session


def test_peaks_keep_each_runs_highest_request_at_its_own_index() -> None:
    def costs(values: list[int]) -> tuple[RequestCost, ...]:
        return tuple(RequestCost(index=i, chars=0, tokens=v, usage=Usage())
                     for i, v in enumerate(values, 1))

    values = [1, 9, 2, 3, 8, 1, 1, 7]
    assert peak_points(costs(values), 4) == [(2, 9), (4, 3), (5, 8), (8, 7)]
    assert peak_points(costs(values), 10) == list(enumerate(values, 1))
    assert max(peak_points(costs(list(range(1_000))), 7)) == (1_000, 999)


def test_the_page_has_the_section_and_its_link_only_with_a_whatif(tmp_path) -> None:
    import json

    from core.report import build, collect, render

    history = tmp_path / "history.json"
    history.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                {"role": "assistant", "content": "hello"}]}))
    collected = collect(str(history))
    assert collected.recording is not None  # what a what-if runs on again
    report = build(collected)
    page = render(report)
    assert 'id="whatif"' not in page and "#whatif" not in page and "What if" not in page
    report.whatif = sample_whatif()
    page = render(report)
    assert page.index('id="timeline"') < page.index('id="whatif"') < page.index('id="requests"')
    assert '<a href="#whatif">what if</a>' in page


def test_a_failed_strategy_has_dashes_not_zeros_and_its_error_is_said() -> None:
    base = sample_whatif()
    failed = replace(base.strategies[1], error="ValueError: no such thing")
    whatif = replace(base, strategies=(base.strategies[0], failed, base.strategies[2]))
    html = whatif_section(whatif)
    assert table_rows(html)["s08 ✖"] == ["-"] * 8
    assert '<li class="error"><b>s08</b>: error: ValueError: no such thing</li>' in html


def test_a_failed_strategys_short_line_ends_at_its_last_requests_x() -> None:
    """A strategy that stopped at request 50 of 1,000 is drawn over the first 5% of the
    axis, each point at its own request's place, not stretched across the plot."""
    def run_of(count: int, name: str) -> tuple[RequestCost, ...]:
        return tuple(RequestCost(index=i, chars=0, tokens=1_000 + i,
                                 usage=Usage(input=1_000 + i)) for i in range(1, count + 1))

    base = sample_whatif(window=None)
    whole = replace(base.strategies[0], requests=run_of(1_000, "original"))
    failed = replace(base.strategies[1], requests=run_of(50, "s08"), error="boom")
    whatif = replace(base, requests=1_000, strategies=(whole, failed))
    lines = {name: drawn for name, _, _, _, drawn in LINE.findall(whatif_svg(whatif))}
    frame = Frame(1_000, y_scale([2_000]))
    short = [point.split(",") for point in lines["s08"].split()]
    assert [int(x) for x, _ in short] == [round(frame.x(i)) for i in range(50)]
    assert int(short[-1][0]) == round(frame.x(49))  # request 50 of 1,000, not the far end
    long = [point.split(",") for point in lines["original"].split()]
    assert int(long[-1][0]) == round(frame.x(999))
