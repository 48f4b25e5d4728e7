"""``ctxlab report`` on a recorded session: the What if section is there by default (every
strategy), its numbers are ``compare_session``'s, ``--strategies`` picks, ``--no-whatif``
leaves it out, an unknown name is one line and exit 2; a scenario gets no section and
nothing is said of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.sources.replay import load_recording
from core.whatif.columns import RUN_COLUMNS, cell
from core.whatif.run import compare_session
from core.whatif.strategies import STRATEGIES, WhatIfOptions
from tests.core.report.test_whatif_section import LINE, table_rows
from tui.cli import main
from tui.cli.screenshots import REPLAY_FIXTURE


def test_a_sessions_report_has_every_strategy_with_compare_sessions_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(
        f"what if under {len(STRATEGIES)} strategies")
    page = out.read_text()
    expected = compare_session(load_recording(REPLAY_FIXTURE), WhatIfOptions())
    rows = table_rows(page[page.index('<section id="whatif">'):])
    assert list(rows) == list(STRATEGIES)
    for run in expected.strategies:
        assert rows[run.name] == [cell(column, run) for column in RUN_COLUMNS], run.name
    assert [name for name, *_ in LINE.findall(page)] == list(STRATEGIES)
    assert '<a href="#whatif">what if</a>' in page


def test_strategies_picks_and_no_whatif_leaves_it_out(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out),
                 "--strategies", "original,truncate"]) == 0
    assert [name for name, *_ in LINE.findall(out.read_text())] == ["original", "truncate"]
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out), "--no-whatif"]) == 0
    page = out.read_text()
    assert 'id="whatif"' not in page and "#whatif" not in page


def test_an_unknown_strategy_is_one_line_and_exit_2_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out),
                 "--strategies", "original,nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab report: ") and err.count("\n") == 1 and "nonsense" in err
    assert not out.exists()


def test_a_scenarios_report_has_no_whatif_and_says_nothing_of_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", "refactor-auth", "-o", str(out)]) == 0
    assert "what if" not in capsys.readouterr().out
    assert 'id="whatif"' not in out.read_text()
