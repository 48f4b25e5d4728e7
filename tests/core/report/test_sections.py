"""The report's sections: what they print is the events' figures, escaped, and capped."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from core import events as ev
from core.report import SourceError, build, collect, render
from core.report.caps import ITEM_CHARS, Budget
from core.report.sections import requests, stages, timeline
from core.views.collect import Collected
from core.views.window import window_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
CLAUDE_CODE = FIXTURES / "claude-code-2.1.197" / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"
HOSTILE = "<script>alert('x')</script><img src=http://example.com/p.png>"


def _history(tmp_path: Path, result: str) -> Path:
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"model": "<b>model</b>", "messages": [
        {"role": "user", "content": "look at x"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "cat x"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": result}]},
        {"role": "assistant", "content": "done"}]}))
    return path


@pytest.fixture(scope="module")
def replayed() -> Collected:
    return collect(str(CLAUDE_CODE))


def test_a_script_in_a_tool_result_stays_text(tmp_path: Path):
    page = render(build(collect(str(_history(tmp_path, HOSTILE)))))
    assert page.count("<script") == 1, "only the page's own search script"
    assert "<img" not in page and "<b>model" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


def test_a_long_tool_result_is_quoted_to_the_cap_and_the_cut_says_where(tmp_path: Path):
    result = "a" * 50_000
    page = render(build(collect(str(_history(tmp_path, result)))))
    assert "a" * ITEM_CHARS in page and "a" * (ITEM_CHARS + 1) not in page
    assert f"{50_000 - ITEM_CHARS:,} of 50,000 chars not shown" in page
    assert "the whole text: message 3 of ctxlab request 2 in the source" in page


def test_once_the_report_s_allowance_is_spent_messages_are_counted_not_quoted(
        tmp_path: Path):
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for n in range(3):
        messages += [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": "r" * 5_000}]}]
    path = tmp_path / "history.json"
    path.write_text(json.dumps([*messages, {"role": "assistant", "content": "done"}]))
    report = build(collect(str(path)))
    report.budget = Budget(item=100, total=150)
    page = render(report)
    assert "r" * 100 in page and "r" * 101 not in page
    assert "new messages not quoted: the report quotes" in page


def test_the_budget_quotes_each_item_to_its_cap_and_the_report_to_its_total():
    budget = Budget(item=10, total=15)
    first, second, third = budget.quote("x" * 12), budget.quote("y" * 12), budget.quote("z")
    assert (first.shown, first.cut) == ("x" * 10, 2)
    assert (second.shown, second.cut) == ("y" * 5, 7)
    assert (third.shown, third.cut, third.total) == ("", 1, 1)


def test_every_request_of_each_side_is_listed_with_the_events_figures(replayed: Collected):
    report = build(replayed)
    html = requests(report)
    main = [e for e in replayed.events if isinstance(e, ev.ModelRequest)]
    steps = [e for e in replayed.events if isinstance(e, ev.ReplayStep)]
    for side, purpose in (("ctxlab", "main"), ("original", "original")):
        ids = re.findall(rf'id="request-{side}-(\d+)"', html)
        assert len(ids) == sum(1 for e in main if e.purpose == purpose)
    for step in steps:  # the original's tokens are the recorded ones, its chars the step's
        line = re.search(rf'id="request-original-{step.index}"><summary>([^<]*)', html)
        assert line is not None
        text = unescape(line.group(1))
        assert f"{step.original_tokens:,} tokens (counted" in text
        assert f"{step.original_chars:,} chars" in text
        block = html.split(f'id="request-original-{step.index}">', 1)[1].split("</details>")[0]
        # the Window tab's split of the recorded tokens: every category with its chars
        window = window_of(report.log, "original", step.index)
        assert window is not None and window.tokens == step.original_tokens
        assert {p.category: p.chars for p in window.parts if p.chars is not None} == \
            {name: chars for name, chars in step.breakdown.items() if chars}
        for part in window.parts:
            chars = "—" if part.chars is None else f"{part.chars:,}"
            assert f"<b>{part.category}</b> {chars}/{part.tokens:,}" in block


def test_the_timeline_has_a_point_per_request_and_a_mark_per_compacted_request(
        replayed: Collected):
    report = build(replayed)
    svg = timeline(report)
    for side in report.log.sides():
        points = re.search(rf'class="series" data-side="{side}" data-requests="(\d+)"[^>]*'
                           r'points="([^"]*)"', svg)
        assert points is not None
        assert len(points.group(2).split()) == len(report.log.side(side))
    compacted = sum(1 for side in report.log.sides() for p in report.log.side(side)
                    if p.stages)
    assert svg.count('class="mark"') == compacted > 0
    assert "model window 200,000" in svg
    drawn = report.timeline()  # the Timeline tab's, with each side's trigger
    for series in drawn.series:
        if series.threshold is not None:
            assert f"{series.threshold:,}</text>" in svg
    original = drawn.side("original")
    assert original is not None and original.threshold == 190_048  # Claude Code's own


def test_every_stage_is_listed_with_its_before_after_and_kept_summary(replayed: Collected):
    html = stages(build(replayed))
    events = [e for e in replayed.events if isinstance(e, ev.Stage)]
    assert html.count('class="item stage"') == len(events) == 2
    for event in events:
        assert f"{event.before_chars:,} → {event.after_chars:,} chars" in html
        assert f"<td>{event.pre_tokens:,}</td><td>{event.post_tokens:,}</td>" in html
    assert html.count("Kept summary") == 2
    assert "continued from a previous conversation" in html


def test_a_json_event_log_gives_the_figures_of_the_run_it_logged(replayed: Collected,
                                                                tmp_path: Path):
    log = tmp_path / "run.jsonl"
    log.write_text("".join(ev.dumps_event(e) + "\n" for e in replayed.events))
    again = build(collect(str(log)))
    first = build(replayed)
    assert again.collected.kind == "event log"
    for side in first.log.sides():
        assert ([(p.index, p.context_tokens, p.chars) for p in again.log.side(side)]
                == [(p.index, p.context_tokens, p.chars) for p in first.log.side(side)])
    assert len(again.stages) == len(first.stages)
    assert "No turn diff" in requests(again), "a log keeps no messages to diff"


def test_a_scenario_report_has_turn_diffs_and_ctxlab_s_kept_summaries():
    report = build(collect("refactor-auth"))
    html = requests(report) + stages(report)
    assert re.search(r'<span class="diff">\+\d+ \u2212\d+ ~\d+</span>', html)
    assert "Kept summary" in html and "[Reactive compact]" in html
    ours = report.timeline().side("ctxlab")
    assert ours is not None and ours.threshold, "ctxlab's trigger is drawn"
    assert "ctxlab&#x27;s trigger" in timeline(report) or "ctxlab's trigger" in timeline(report)


@pytest.mark.parametrize("source, said", [
    ("no-such-scenario", "no such file, and no scenario"),
    ("/etc/hostname", "not a session ctxlab can replay"),
])
def test_a_source_that_is_no_report_is_one_line(source: str, said: str):
    with pytest.raises(SourceError) as caught:
        collect(source)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_log_with_a_line_that_is_no_event_says_which(tmp_path: Path):
    log = tmp_path / "run.jsonl"
    log.write_text('{"type": "run_start", "t": 0, "provider": "x", "workspace": "w"}\n'
                   '{"type": "stage", "t": 1}\n')
    with pytest.raises(SourceError, match="line 2 is not a ctxlab event"):
        collect(str(log))


def test_the_turn_diff_measures_a_list_as_json_chars_does():
    from core.measure import json_chars
    from core.report.turns import Differ

    messages = [{"role": "user", "content": "héllo \"x\""},
                {"role": "assistant", "content": [{"type": "text", "text": "a" * 5000}]}]
    differ = Differ()
    assert differ.chars(messages) == json_chars(messages)
    assert differ.chars([]) == json_chars([])


def test_a_watch_recording_and_a_saved_session_are_sources(tmp_path: Path):
    watched = collect(str(FIXTURES / "watch-2.1.197" / "compactions.jsonl"))
    assert watched.kind == "replay"
    assert build(watched).log.sides() == ["ctxlab", "original"]
    session = tmp_path / "session.json"  # as ctxlab run --session writes it
    session.write_text(json.dumps({"version": 1, "turns": 2, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"}, {"role": "assistant", "content": "yes"}]}))
    report = build(collect(str(session)))
    assert [len(report.log.side(s)) for s in report.log.sides()] == [2, 2]
