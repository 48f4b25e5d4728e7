"""``ctxlab report SOURCE -o FILE``: written whole, never over a file that is not a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.report.output import is_report
from tui.cli import main

SCENARIO = "refactor-auth"


def test_it_writes_a_report_and_says_what_is_in_it(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "report.html"
    assert main(["report", SCENARIO, "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}") and "23 ctxlab requests, 14 stages" in said
    assert is_report(out)
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"], "no temporary file left"


def test_an_earlier_report_is_replaced(tmp_path: Path):
    out = tmp_path / "report.html"
    assert main(["report", SCENARIO, "-o", str(out)]) == 0
    out.write_text(out.read_text().replace("</body>", "<p>old</p></body>"))
    assert main(["report", SCENARIO, "-o", str(out)]) == 0
    assert "<p>old</p>" not in out.read_text()


def test_a_file_that_is_not_a_report_is_kept_unless_forced(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "notes.html"
    out.write_text("<p>mine</p>")
    assert main(["report", SCENARIO, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"ctxlab report: {out}: exists and is not a ctxlab report; --force replaces it\n"
    assert out.read_text() == "<p>mine</p>"
    assert main(["report", SCENARIO, "-o", str(out), "--force"]) == 0
    assert is_report(out)


@pytest.mark.parametrize("source", ["no-such-thing", "/etc/hostname", "."])
def test_a_bad_source_is_one_line_and_exit_2(source: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "report.html"
    assert main(["report", source, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab report: ") and err.count("\n") == 1
    assert not out.exists()


def test_a_folder_as_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["report", SCENARIO, "-o", str(tmp_path)]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_a_run_that_failed_still_writes_its_report_and_exits_1(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    import core.report
    from core import events as ev
    from core.views.collect import Collected

    events = [ev.RunStart(provider="scripted", workspace="w"),
              ev.Error(message="HTTP 400: <bad>", kind="ApiError"),
              ev.RunEnd(ok=False, turns=0)]
    monkeypatch.setattr(core.report, "collect",
                        lambda source: Collected(source=source, kind="scenario", events=events))
    out = tmp_path / "report.html"
    assert main(["report", "x", "-o", str(out)]) == 1
    assert capsys.readouterr().err == ("ctxlab report: the run failed: HTTP 400: <bad> (the "
                                       "report shows it up to there)\n")
    assert "ApiError: HTTP 400: &lt;bad&gt;" in out.read_text()


def test_the_log_of_a_failed_run_is_a_good_source():
    from core import events as ev
    from core.views.collect import Collected

    events = [ev.RunStart(provider="scripted", workspace="w"), ev.RunEnd(ok=False, turns=0)]
    assert Collected("run.jsonl", "event log", list(events)).failure() is None
    assert Collected("x", "scenario", list(events)).failure() == "the run did not complete"
