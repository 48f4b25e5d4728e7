"""``ctxlab compare``: flags, the JSON object, the table, and one-line errors."""

from __future__ import annotations

import json

import pytest

from tui.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_one_object_with_every_strategy_in_order(capsys):
    code, out, err = run(capsys, "--scenario", "refactor-auth", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)  # one object, nothing else on stdout
    assert data["scenario"] == "refactor-auth"
    names = [s["name"] for s in data["strategies"]]
    assert names == ["truncate", "compact", "compact+memory"]  # the default list
    for s in data["strategies"]:
        assert {"name", "peak_chars", "mean_chars", "calls", "side_calls", "losses",
                "probes"} <= set(s)
        assert all({"ask", "expect", "answerable"} <= set(p) for p in s["probes"])
    by_name = {s["name"]: s for s in data["strategies"]}
    assert by_name["truncate"]["losses"] > by_name["compact+memory"]["losses"] == 0


def test_a_chosen_list_runs_only_those(capsys):
    code, out, _ = run(capsys, "--strategies", "compact", "--json", "--scenario", "long-chat")
    assert code == 0
    assert [s["name"] for s in json.loads(out)["strategies"]] == ["compact"]


def test_the_table_names_each_strategy_and_the_unanswered_probes(capsys):
    code, out, _ = run(capsys, "--strategies", "truncate,compact+memory")
    assert code == 0
    for word in ("truncate", "compact+memory", "losses", "probes"):
        assert word in out
    assert "truncate, turn 5: cannot answer" in " ".join(out.split())


def test_piped_headers_are_whole_and_each_failing_probe_is_one_line_with_its_turns(
        capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: no width given
    from core.compact.managers import Manager
    from core.compare import Comparison, ProbeResult, StrategyResult
    from tui.cli.cmd_compare import print_table

    failing = [ProbeResult("Which modules are migrated?", "app/mod_01.py", False, (), t)
               for t in (3, 4, 5, 9)]
    probes = (*failing, ProbeResult("What header?", "# migrated", True, ("worklog",), 3))
    strategies = tuple(StrategyResult(f"strategy-with-a-long-name-{i}", Manager.PIPELINE, "",
                                      True, 51, 5_989, 5_025, 6, 0, probes) for i in range(4))
    print_table(Comparison("long-migration", strategies))
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "strategy" in line and "calls" in line)
    assert header.split()[-1] == "cost" and "…" not in out  # the last column, whole
    lines = [line for line in out.splitlines() if "cannot answer" in line]
    assert lines == [f"  strategy-with-a-long-name-{i}, turns 3–5, 9: cannot answer "
                     f"'Which modules are migrated?' (expected 'app/mod_01.py')"
                     for i in range(4)]


@pytest.mark.parametrize(("args", "needle"), [
    (("--strategies", "truncate,bogus"), "'bogus'"),
    (("--strategies", ","), "no strategy"),
    (("--scenario", "no-such-scenario"), "no-such-scenario"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys, args, needle):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("ctxlab compare: ") and needle in err


ALL = ("truncate,compact,compact+memory,compact+memory+pinned,api-clear-tool-uses,"
       "api-compaction,observation-masking")


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_at_any_width_every_number_and_header_is_whole(capsys, monkeypatch, columns):
    """At 80 columns every number was cut (``282…``, ``$0.…``) and headers read ``c…``: the
    columns that do not fit now go to a second table, each number whole."""
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "--scenario", "refactor-auth", "--strategies", ALL)
    assert code == 0
    _, data, _ = run(capsys, "--scenario", "refactor-auth", "--strategies", ALL, "--json")
    tables = out.split("chars: the messages sent")[0]
    assert "…" not in tables
    assert all(len(line) <= columns for line in tables.splitlines())
    cells = set(tables.split())
    for s in json.loads(data)["strategies"]:
        assert {f"{s['peak_chars']:,}", f"{s['mean_chars']:,}",
                f"{s['billed_input_tokens']:,}", f"${s['est_cost']:.4f}",
                f"{s['cache_read_share']:.0%}"} <= cells
    for header in ("calls", "losses", "billed", "cache", "cost"):
        assert header in cells
    if columns == 200:
        assert tables.count("strategy") == 1  # wide enough: one table


def test_a_summary_the_strategy_does_not_write_is_explained(capsys):
    """``api-clear-tool-uses`` is documented as writing no summary yet counted two summary
    side calls, unexplained: the notes say they are the reactive compact and the compact
    tool, answered by ctxlab's summary."""
    code, out, _ = run(capsys, "--scenario", "refactor-auth", "--strategies",
                       "compact,api-clear-tool-uses", "--json")
    assert code == 0
    compact, api = json.loads(out)["strategies"]
    assert api["side_work"]["summary"] == 2 and len(api["notes"]) == 2
    assert any("refused as too long" in n and "reactive compact" in n for n in api["notes"])
    assert any("compact tool" in n for n in api["notes"])
    assert compact["notes"] == []  # the pipeline's summaries are its own
    _, table, _ = run(capsys, "--scenario", "refactor-auth", "--strategies",
                      "api-clear-tool-uses")
    assert "api-clear-tool-uses: 1 summary: a prompt was refused" in table
