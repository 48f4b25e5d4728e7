"""``ctxlab report`` on a recorded session: the What if section is there by default (every
strategy), its numbers are ``compare_session``'s, ``--strategies`` picks, ``--no-whatif``
leaves it out, an unknown name is one line and exit 2; a scenario gets no section and
nothing is said of one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.sources.replay import load_recording
from core.whatif.columns import RUN_COLUMNS, cell
from core.whatif.model import WhatIf
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


def test_a_failed_strategy_writes_the_page_and_exits_1_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``compare --session`` does: the page shows the failure, the exit status says it."""
    import dataclasses

    import core.whatif.run as run_module

    real = run_module.compare_session

    def one_fails(recording: Any, options: WhatIfOptions) -> WhatIf:
        whatif = real(recording, options)
        runs = tuple(dataclasses.replace(run, error="RuntimeError: engine broke")
                     if run.name == "s08" else run for run in whatif.strategies)
        return dataclasses.replace(whatif, strategies=runs)

    monkeypatch.setattr(run_module, "compare_session", one_fails)
    out = tmp_path / "report.html"
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(f"wrote {out}")
    assert captured.err.startswith("ctxlab report: ") and captured.err.count("\n") == 1
    assert "s08" in captured.err and "RuntimeError: engine broke" in captured.err
    page = out.read_text()  # written, and it shows the failure
    assert "s08 ✖" in table_rows(page[page.index('<section id="whatif">'):])


def test_an_os_error_in_the_whatif_is_not_blamed_on_the_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import core.whatif.run as run_module

    archive = "/tmp/ctxlab-whatif-x/.transcripts/transcript_1.jsonl"

    def full_disk(recording: Any, options: WhatIfOptions) -> WhatIf:
        raise OSError(28, "No space left on device", archive)

    monkeypatch.setattr(run_module, "compare_session", full_disk)
    out = tmp_path / "report.html"
    assert main(["report", str(REPLAY_FIXTURE), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert not err.startswith(f"ctxlab report: {out}")
    assert "what if" in err and str(REPLAY_FIXTURE) in err
    assert f"{archive}: No space left on device" in err
