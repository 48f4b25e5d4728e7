"""``ctxlab compare --session``: the flags, the table (never a cut number), ``--facts``,
``--json`` and one-line refusals, as ``ctxlab replay`` makes them."""

from __future__ import annotations

import pytest

from core.usage import Usage
from core.whatif.model import TRAJECTORY_NOTE, Fact, FactCheck, RequestCost, StrategyRun, WhatIf
from tui.cli.whatif_table import print_whatif

FACTS = (Fact("toolu_01", "Read", 3, 40, "reread", "src/app.py"),
         Fact("toolu_02", "Bash", 5, 57, "quote", "def main(): ..."))


def big_run(name: str, scale: int, error: str | None = None) -> StrategyRun:
    """A strategy with figures as wide as a long session's (billions of tokens, dollars in
    the thousands), the widest a column has to hold whole."""
    requests = tuple(RequestCost(i, 4_000_000 * scale, 1_000_000 * scale + i,
                                 Usage(input=123_456 * scale, cache_write_5m=98_765,
                                       cache_read=9_876_543 * scale, output=4_321), None)
                     for i in range(1, 301))
    checks = (FactCheck(FACTS[0], scale % 2 == 0), FactCheck(FACTS[1], True))
    return StrategyRun(name, f"{name}: a description", requests, compactions=12 * scale,
                       results_left=1_234 * scale, results_recoverable=1_234 * scale - 1,
                       facts=checks, lesson=f"{name} teaches something", cost=1_234.5678 * scale,
                       error=error)


NAMES = ("original", "s08", "s08-window", "api-clear-tool-uses", "api-compaction",
         "observation-masking", "truncate")


def big_whatif() -> WhatIf:
    return WhatIf("/sessions/long-session.jsonl", "claude-code", "claude-sonnet-4-5", 300,
                  3.61, "usage", 14_321, 200_000,
                  tuple(big_run(name, i + 1) for i, name in enumerate(NAMES)),
                  price_model="claude-sonnet-4-5",
                  summary_line="read 1,498 of 1,500 lines: 300 requests, 4 compactions",
                  partial=True)


def figures(data: dict) -> list[set[str]]:
    """Each strategy's figures as the table prints them, from the JSON alone."""
    rows = []
    for s in data["strategies"]:
        facts = f"{s['facts_kept']:,}/{s['facts']:,}" if s["facts"] else "-"
        cost = "—" if s["cost"] is None else f"${s['cost']:.4f}"
        rows.append({f"{s['billed_input_tokens']:,}", f"{s['cache_read_share']:.0%}", cost,
                     f"{s['peak_tokens']:,}", f"{s['compactions']:,}",
                     f"{s['results_left']:,}/{s['results_recoverable']:,}", facts,
                     f"{s['rereads_after_drop']:,}"})
    return rows


def tables_of(out: str) -> str:
    return out.split(TRAJECTORY_NOTE[:30])[0]


def assert_every_figure_whole(out: str, data: dict, columns: int) -> None:
    tables = tables_of(out)
    assert "…" not in tables
    assert all(len(line) <= columns for line in tables.splitlines())
    lines = tables.splitlines()
    for s, cells in zip(data["strategies"], figures(data), strict=True):
        row_cells = {c for line in lines if line.split()[:1] == [s["name"]]
                     for c in line.split()[1:]}
        assert cells <= row_cells, (s["name"], cells - row_cells)


@pytest.mark.parametrize("columns", [80, 200])
def test_no_number_is_cut_at_any_width(capsys, monkeypatch, columns):
    """At 80 columns the eight figures do not fit one table: the rest go to a second one,
    each row named again, every number whole."""
    monkeypatch.setenv("COLUMNS", str(columns))
    whatif = big_whatif()
    print_whatif(whatif)
    out = capsys.readouterr().out
    assert_every_figure_whole(out, whatif.to_json(), columns)
    assert tables_of(out).count("strategy") == (1 if columns == 200 else 2)


def test_after_the_table_the_note_the_session_the_legend_and_a_lesson_each(capsys,
                                                                            monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    print_whatif(big_whatif())
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    note, session, legend = (flat.index(TRAJECTORY_NOTE), flat.index("session: "),
                             flat.index("billed input: the input tokens"))
    assert note < session < legend < flat.index("what this session teaches:")
    assert "read 1,498 of 1,500 lines: 300 requests, 4 compactions (partly read)" in flat
    assert ("model claude-sonnet-4-5 · 3.61 chars per token (usage) · fixed overhead 14,321 "
            "tokens per request · window 200,000 tokens · prices of claude-sonnet-4-5") in flat
    for name in NAMES:
        assert f"  {name}: {name} teaches something" in out
    assert "facts under" not in out  # listed only with --facts


def test_facts_lists_every_fact_per_strategy_with_its_requests(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    print_whatif(big_whatif(), facts=True)
    out = capsys.readouterr().out
    assert "facts under original: 1 of 2 visible when the session relied on them" in out
    assert "facts under s08: 2 of 2 visible" in out
    assert ("  request 40 re-read src/app.py: Read result toolu_01 from request 3 — "
            "not visible") in out.split("facts under original:")[1]
    assert ("  request 57 quoted 'def main(): ...': Bash result toolu_02 from request 5 — "
            "visible") in out


def test_a_failed_strategy_shows_dashes_not_zeros_and_why(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    whatif = big_whatif()
    broken = big_run("truncate", 1, error="the archive could not be written")
    print_whatif(WhatIf(**{**whatif.__dict__, "strategies": (whatif.strategies[0], broken)}))
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(" truncate (failed)"))
    assert set(row.split()[2:]) == {"-"}
    assert "  truncate: failed (the archive could not be written)" in out


def test_no_price_says_so_and_costs_are_dashes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    whatif = big_whatif()
    unpriced = tuple(StrategyRun(**{**s.__dict__, "cost": None}) for s in whatif.strategies)
    print_whatif(WhatIf(**{**whatif.__dict__, "strategies": unpriced, "price_model": None}))
    out = capsys.readouterr().out
    assert "no price known for this model: costs shown as —" in out
    assert_every_figure_whole(out, WhatIf(**{**whatif.__dict__, "strategies": unpriced})
                              .to_json(), 200)
