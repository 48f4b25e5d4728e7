"""``ctxlab compare --session``: the flags, the table (never a cut number), ``--facts``,
``--json`` and one-line refusals, as ``ctxlab replay`` makes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.usage import Usage
from core.whatif.model import TRAJECTORY_NOTE, Fact, FactCheck, RequestCost, StrategyRun, WhatIf
from tests.core.sources.replay.conftest import CLAUDE, CODEX, WATCHED_CODEX
from tui.cli import main
from tui.cli.compare_session import terminal_progress
from tui.cli.whatif_table import print_whatif


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> bool:
    return err.count("\n") == 1 and err.startswith("ctxlab compare: ") and "Traceback" not in err


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
    assert "how each strategy was set up:" not in out  # no strategy has a note
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


def test_a_strategys_notes_follow_the_lessons_under_their_own_heading(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    whatif = big_whatif()
    noted = StrategyRun(**{**whatif.strategies[1].__dict__, "notes": ("trigger 5,000 tokens",)})
    print_whatif(WhatIf(**{**whatif.__dict__, "strategies": (whatif.strategies[0], noted)}))
    out = capsys.readouterr().out
    lessons, notes = out.split("how each strategy was set up:")
    assert "  s08: s08 teaches something" in lessons
    assert notes.strip() == "s08: trigger 5,000 tokens"


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


def test_progress_goes_to_a_terminal_only(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    assert terminal_progress() is None
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    show = terminal_progress()
    assert show is not None
    show("s08", 1, 300)
    assert "s08: request 1 of 300" in capsys.readouterr().err


# -- the command, on recorded sessions ------------------------------------------------------

def test_json_is_one_object_with_every_strategy_in_order_and_nothing_on_stderr(capsys):
    from core.whatif.strategies import STRATEGIES

    code, out, err = run(capsys, "--session", str(CLAUDE), "--json")
    assert code == 0 and err == ""  # not a terminal: no progress line
    data = json.loads(out)
    assert [s["name"] for s in data["strategies"]] == list(STRATEGIES)
    assert data["note"] == TRAJECTORY_NOTE and data["format"] == "claude-code"
    assert all(len(s["per_request"]) == data["requests"] for s in data["strategies"])


@pytest.mark.parametrize("columns", [80, 200])
def test_every_figure_of_the_json_appears_whole_in_the_table(capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "--session", str(CLAUDE))
    assert code == 0
    _, data, _ = run(capsys, "--session", str(CLAUDE), "--json")
    assert_every_figure_whole(out, json.loads(data), columns)


def test_the_strategies_and_their_parameters_reach_the_runner(capsys, monkeypatch):
    seen = {}

    def fake(recording, options):
        seen["options"] = options
        raise SystemExit(0)

    monkeypatch.setattr("core.whatif.run.compare_session", fake)
    with pytest.raises(SystemExit):
        main(["compare", "--session", str(CLAUDE), "--strategies", "truncate,s08",
              "--clear-trigger", "5000", "--clear-keep", "0", "--compaction-trigger", "9000",
              "--mask-keep", "4"])
    options = seen["options"]
    assert options.strategies == ("truncate", "s08")
    assert (options.clear_trigger_tokens, options.clear_keep,
            options.compaction_trigger_tokens, options.mask_keep) == (5000, 0, 9000, 4)
    assert options.progress is None  # stderr is not a terminal here


def test_a_watch_recording_and_its_conversation_flag_are_read_as_replay_reads_them(capsys):
    code, out, _ = run(capsys, "--session", str(WATCHED_CODEX), "--json",
                       "--strategies", "original,truncate")
    assert code == 0 and json.loads(out)["format"] == "requests"
    code, _, err = run(capsys, "--session", str(WATCHED_CODEX), "--conversation", "nope")
    assert code == 2 and one_line_error(err) and "nope" in err
    code, _, err = run(capsys, "--session", str(CLAUDE), "--conversation", "x")
    assert code == 2 and one_line_error(err) and "watch recording" in err


# -- bad input: one line, exit 2 ------------------------------------------------------------

def test_a_missing_an_empty_and_a_foreign_file_are_one_line_each(tmp_path, capsys):
    cases = [(tmp_path / "missing.jsonl", None, "no such file")]
    for name, content in (("empty.jsonl", b""), ("table.csv", b"a,b\n1,2\n"),
                          ("binary.jsonl", b"\x00\x01binary")):
        (tmp_path / name).write_bytes(content)
        cases.append((tmp_path / name, content, ""))
    for path, _, needle in cases:
        code, out, err = run(capsys, "--session", str(path))
        assert code == 2 and out == "" and one_line_error(err) and needle in err, err


def test_a_session_read_as_another_format_is_one_line(capsys):
    code, out, err = run(capsys, "--session", str(CLAUDE), "--format", "codex")
    assert code == 2 and out == "" and one_line_error(err)
    assert "no model request found as codex" in err


def test_a_garbled_session_names_how_much_was_read(tmp_path, capsys):
    """Every line garbled but the first few: nothing to compare, and the line says how much
    of the file was read, as replay's does."""
    rows = CODEX.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "garbled.jsonl"
    path.write_text("\n".join(rows[:2] + ["{oops"] * (len(rows) - 2)) + "\n")
    code, out, err = run(capsys, "--session", str(path), "--format", "codex")
    assert code == 2 and out == "" and one_line_error(err)
    assert f"read 2 of {len(rows)} lines" in err and "not valid JSON" in err


def test_a_truncated_session_compares_what_was_read_and_says_so(tmp_path, capsys):
    """A recording cut mid-line (an agent still writing it): the requests before the cut are
    compared, and the counts say one line was not read."""
    text = CLAUDE.read_text(encoding="utf-8")
    path = tmp_path / "cut.jsonl"
    path.write_text(text[: text.rstrip("\n").rfind("\n") + 40])
    total = text.count("\n")
    code, out, _ = run(capsys, "--session", str(path), "--json")
    assert code == 0
    assert f"read {total - 1} of {total} lines" in json.loads(out)["read"]
    code, out, _ = run(capsys, "--session", str(path))
    assert code == 0 and f"read {total - 1} of {total} lines" in " ".join(out.split())


@pytest.mark.parametrize(("args", "needle"), [
    (("--strategies", "s08,bogus"), "'bogus'"),
    (("--strategies", "s08,bogus"), "observation-masking"),  # the known names are listed
    (("--clear-trigger", "abc"), "--clear-trigger abc: not a whole number"),
    (("--mask-keep", "1.5"), "--mask-keep 1.5: not a whole number"),
    (("--clear-trigger", "0"), "--clear-trigger: must be positive"),
    (("--compaction-trigger", "-5"), "--compaction-trigger: must be positive"),
    (("--clear-keep", "-1"), "--clear-keep: must be 0 or more"),
    (("--scenario", "refactor-auth"), "not allowed with argument --session"),
])
def test_bad_flags_are_one_line_and_exit_2(capsys, args, needle):
    code, out, err = run(capsys, "--session", str(CLAUDE), *args)
    assert code == 2 and out == "" and one_line_error(err) and needle in err, err


@pytest.mark.parametrize("flag", [["--facts"], ["--mask-keep", "3"], ["--format", "codex"],
                                  ["--conversation", "c1"]])
def test_a_session_flag_without_a_session_is_refused(capsys, flag):
    code, out, err = run(capsys, "--scenario", "refactor-auth", *flag)
    assert code == 2 and out == "" and one_line_error(err) and "is for --session" in err


def test_a_session_whose_path_is_a_directory_is_one_line(capsys):
    code, _, err = run(capsys, "--session", str(Path(CLAUDE).parent))
    assert code == 2 and one_line_error(err) and "is a directory" in err
