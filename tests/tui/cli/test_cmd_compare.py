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
