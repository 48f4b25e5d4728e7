"""The what-if runner: each strategy over small hand-built recordings, with the expected
figures worked out here from the rules (chars are the JSON of what was sent, tokens are
chars at the session's ratio plus its overhead, the cache reads the unchanged prefix), and a
longer generated session where every total must be the sum of its rows."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.sessions import claude_code_session
from core.archive.store import Archive
from core.compact.managers import Manager
from core.config import Thresholds
from core.sources.replay import load_recording
from core.sources.replay.model import Compaction, Exchange, Recording
from core.usage import Usage
from core.whatif.facts import find_facts
from core.whatif.lessons import lesson
from core.whatif.model import Fact, FactCheck, RequestCost, StrategyRun, WhatIf
from core.whatif.recoverable import ArchiveCheck, Departures, recorded_results
from core.whatif.run import compare_session
from core.whatif.strategies import (
    STRATEGIES,
    WhatIfError,
    WhatIfOptions,
    parse_strategy_names,
)

Message = dict[str, Any]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def use(n: int) -> Message:
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"command": f"cat f{n}"}}]}


def result(n: int, text: str) -> Message:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}]}


def rounds(results: list[str], **recording: Any) -> Recording:
    """A prompt, then one tool call per result, then a closing reply: no usage, so the
    ratio is the estimate's 4.0 and the overhead 0."""
    steps: list[Exchange | Compaction] = [Exchange([{"role": "user", "content": "look"}], use(1))]
    for n, text in enumerate(results, 1):
        last = n == len(results)
        reply = {"role": "assistant", "content": "done"} if last else use(n + 1)
        steps.append(Exchange([result(n, text)], reply))
    return Recording("messages", Path("hand.json"), Manager.AGENT, steps=steps, **recording)


def run(recording: Recording, *names: str, **options: Any) -> WhatIf:
    return compare_session(recording, WhatIfOptions(strategies=names, **options))


def only(whatif: WhatIf, name: str) -> StrategyRun:
    found = whatif.strategy(name)
    assert found is not None and found.error is None, found and found.error
    return found


# -- names ----------------------------------------------------------------------------------


def test_strategy_names_in_the_documented_order() -> None:
    assert tuple(STRATEGIES) == ("original", "s08", "s08-window", "api-clear-tool-uses",
                                 "api-compaction", "observation-masking", "truncate")
    assert parse_strategy_names(" s08, truncate,s08 ") == ("s08", "truncate")


def test_an_unknown_strategy_names_every_known_one() -> None:
    with pytest.raises(WhatIfError) as error:
        parse_strategy_names("s08,s09")
    assert "'s09'" in str(error.value)
    assert all(name in str(error.value) for name in STRATEGIES)
    with pytest.raises(WhatIfError, match="no strategy"):
        parse_strategy_names(" , ")
    with pytest.raises(WhatIfError, match="'nope'"):
        run(rounds(["x"]), "nope")


# -- one strategy, worked out by hand -------------------------------------------------------


def test_a_strategy_that_changes_nothing_sends_the_trajectory() -> None:
    """s08 at the course's limits never fires on two small rounds: chars are the JSON of the
    recorded messages, tokens chars / 4, and the second request reads the whole first
    request (its one message, brackets counted) from the cache."""
    recording = rounds(["x" * 400])
    first = [{"role": "user", "content": "look"}]
    second = [*first, use(1), result(1, "x" * 400)]
    s08 = only(run(recording, "s08"), "s08")
    assert [r.chars for r in s08.requests] == [len(dumps(first)), len(dumps(second))]
    assert [r.tokens for r in s08.requests] == [round(len(dumps(first)) / 4),
                                               round(len(dumps(second)) / 4)]
    read = round(len(dumps(first)) / 4)
    assert s08.requests[0].usage == Usage(cache_write_5m=s08.requests[0].tokens)
    assert s08.requests[1].usage == Usage(cache_read=read,
                                          cache_write_5m=s08.requests[1].tokens - read)
    assert (s08.compactions, s08.side_calls, s08.results_left) == (0, 0, 0)
    assert s08.requests[1].stages == ()


def test_original_is_the_recorded_usage_and_its_compaction_its_own() -> None:
    """Requests with usage are the API's figures, as recorded; the agent's compaction counts
    once, its summary is a side call (what it summarised in, the summary out), and the tool
    result it compacted away left but is in the recording."""
    summary = "s" * 80
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 20,
             "cache_read_input_tokens": 300, "output_tokens": 7}
    steps: list[Exchange | Compaction] = [
        Exchange([{"role": "user", "content": "look"}], use(1), usage=usage),
        Exchange([result(1, "y" * 40)], {"role": "assistant", "content": "ok"}),
        Compaction(Manager.CLAUDE_CODE, "auto", kept=[{"role": "user", "content": summary}],
                   summary=summary),
        Exchange([{"role": "user", "content": "more"}], {"role": "assistant", "content": "x"}),
    ]
    recording = Recording("claude-code", Path("s.jsonl"), Manager.CLAUDE_CODE, steps=steps)
    original = only(run(recording, "original"), "original")
    first, second, third = original.requests
    assert first.counted and first.usage == Usage(10, 20, 0, 300, 7) and first.tokens == 330
    assert not second.counted
    before = [{"role": "user", "content": "look"}, use(1), result(1, "y" * 40),
              {"role": "assistant", "content": "ok"}]
    assert third.chars == len(dumps([{"role": "user", "content": summary},
                                     {"role": "user", "content": "more"}]))
    assert third.stages == ("auto_compact",)
    assert (original.compactions, original.side_calls) == (1, 1)
    assert original.side == Usage(input=round(len(dumps(before)) / 4), output=round(80 / 4))
    # the summary says nowhere where the result went: it left and cannot be found again
    assert (original.results_left, original.results_recoverable) == (1, 0)


def test_an_original_compaction_that_names_its_transcript_keeps_what_it_removed() -> None:
    """Claude Code's summary ends by naming the transcript to read for details: what the
    compaction removed is recoverable from a file the context points to."""
    summary = ("Summary. If you need specific details from before compaction, read the full "
               "transcript at: /home/dev/.claude/projects/-app/5b1f3c2e.jsonl")
    steps: list[Exchange | Compaction] = [
        Exchange([{"role": "user", "content": "look"}], use(1)),
        Exchange([result(1, "y" * 40)], {"role": "assistant", "content": "ok"}),
        Compaction(Manager.CLAUDE_CODE, "auto", kept=[{"role": "user", "content": summary}],
                   summary=summary),
        Exchange([{"role": "user", "content": "more"}], {"role": "assistant", "content": "x"}),
    ]
    recording = Recording("claude-code", Path("s.jsonl"), Manager.CLAUDE_CODE, steps=steps)
    original = only(run(recording, "original"), "original")
    assert (original.results_left, original.results_recoverable) == (1, 1)


def test_truncate_drops_what_does_not_fit_and_loses_it() -> None:
    """A stated window of 250 tokens is 1,000 chars at the ratio 4.0. The third request
    (1,057 chars) keeps only the second round behind a marker; the fourth (1,081 chars
    with that marker) only the third round. Both results dropped are lost."""
    recording = rounds(["a" * 300, "b" * 300, "c" * 300], window_tokens=250)
    truncate = only(run(recording, "truncate"), "truncate")
    assert [r.stages for r in truncate.requests] == [(), (), ("sliding_window",),
                                                      ("sliding_window",)]
    marker = {"role": "user", "content": "[4 earlier messages dropped]"}
    assert truncate.requests[-1].chars == len(dumps([marker, use(3), result(3, "c" * 300)]))
    assert truncate.compactions == 2
    assert (truncate.results_left, truncate.results_recoverable) == (2, 0)


def test_context_editing_clears_old_results_and_archives_them_byte_exact(
        tmp_path: Path) -> None:
    """Trigger 150 tokens, keep 1: from the request where the history passes 150 tokens,
    every result but the newest is a placeholder, and each cleared one is in its file."""
    texts = ["a\u00e9" * 150, "b" * 300, "c" * 300]
    recording = rounds(texts)
    whatif = run(recording, "api-clear-tool-uses", clear_trigger_tokens=150, clear_keep=1,
                 workdir=tmp_path)
    clear = only(whatif, "api-clear-tool-uses")
    assert clear.compactions >= 1
    assert (clear.results_left, clear.results_recoverable) == (2, 2)
    archive = Archive(tmp_path / "api-clear-tool-uses")
    held = {e.tool_use_id: (tmp_path / "api-clear-tool-uses" / e.path).read_bytes()
            for e in archive.manifest().values()}
    assert held == {"t1": texts[0].encode(), "t2": texts[1].encode()}


def test_a_changed_archive_file_is_not_recoverable(tmp_path: Path) -> None:
    """The check reads the archive, not the ledger's word: a result file whose bytes
    changed after it was written, or a claim of a file that is not there, does not count."""
    recording = rounds(["a" * 300, "b" * 300, "c" * 300])
    run(recording, "api-clear-tool-uses", clear_trigger_tokens=150, clear_keep=1,
        workdir=tmp_path)
    archive = Archive(tmp_path / "api-clear-tool-uses")
    ledger = [{"tool_use_id": e.tool_use_id, "where": e.path}
              for e in archive.manifest().values()]
    check = ArchiveCheck(Archive(tmp_path / "api-clear-tool-uses"), recorded_results(recording))
    assert check.departures(ledger) == Departures(2, 2)
    changed = next(e for e in ledger if e["tool_use_id"] == "t1")["where"]
    (tmp_path / "api-clear-tool-uses" / changed).write_text("b" * 300, encoding="utf-8")
    missing = {"tool_use_id": "t3", "where": ".task_outputs/tool-results/t3.txt"}
    check = ArchiveCheck(Archive(tmp_path / "api-clear-tool-uses"), recorded_results(recording))
    assert check.departures([*ledger, missing]) == Departures(3, 1)


def test_s08_summary_is_a_side_call() -> None:
    """At a 600-char limit and short results (nothing to micro-compact), the pipeline
    summarises: one side call, what it summarised in and the summary out."""
    recording = rounds(["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"])
    s08 = only(run(recording, "s08", thresholds=Thresholds(context_limit=600)), "s08")
    fired = [r for r in s08.requests if "compact_history" in r.stages]
    assert fired and s08.side_calls == len(fired)
    assert s08.side.input > 0 and s08.side.output > 0
    assert s08.billed == sum((r.usage for r in s08.requests), s08.side)


def test_a_summary_call_is_billed_for_what_it_sends_not_the_whole_history() -> None:
    """The pipeline cuts a long history to its summary input limit before the summary call:
    the call's input is that prepared text, not the history it was cut from."""
    recording = rounds(["r" * 3_000] * 8)
    limits = Thresholds(context_limit=9_000, summary_input_limit=2_000, summary_head=500,
                        summary_tail=1_500, large_result=10**6, micro_short=10**6)
    s08 = only(run(recording, "s08", thresholds=limits), "s08")
    assert s08.side_calls >= 1
    # the prepared text (the limit and its frame), where the history summarised was over
    # the 9,000-char limit: billed on the history, it was over 2,250 tokens a call
    assert s08.side.input <= s08.side_calls * round(2_400 / 4)


def test_base64_media_is_not_counted_as_text_tokens() -> None:
    """The ratio is fitted without image data (an image costs tokens by its pixels): its
    bytes are in the chars sent, not in the tokens."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "A" * 400_000}}
    recording = rounds(["ok"])
    recording.steps[0].input = [{"role": "user", "content": [
        {"type": "text", "text": "look"}, image]}]
    for name in ("original", "s08-window", "observation-masking"):
        first = only(run(recording, name), name).requests[0]
        assert first.chars > 400_000
        assert first.tokens == round((first.chars - 400_000) / 4), name


def test_an_openai_session_bills_no_cache_writes() -> None:
    """OpenAI's cache bills no writes: what is not read is plain input, as the recorded
    usage of such a session has it."""
    recording = rounds(["r1", "r2"], model="gpt-5-codex")
    rows = only(run(recording, "s08"), "s08").requests
    assert all(r.usage.cache_write_5m == 0 for r in rows)
    assert all(r.usage.input + r.usage.cache_read == r.tokens for r in rows)
    claude = only(run(rounds(["r1", "r2"], model="claude-sonnet-4-5"), "s08"), "s08")
    assert all(r.usage.input == 0 for r in claude.requests)


def test_progress_is_told_every_request_of_every_strategy() -> None:
    seen: list[tuple[str, int, int]] = []
    run(rounds(["x", "y"]), "original", "truncate",
        progress=lambda name, n, total: seen.append((name, n, total)))
    assert seen == [("original", 1, 3), ("original", 2, 3), ("original", 3, 3),
                    ("truncate", 1, 3), ("truncate", 2, 3), ("truncate", 3, 3)]


# -- a longer session -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[WhatIf, Path]:
    folder = tmp_path_factory.mktemp("long")
    path = folder / "session.jsonl"
    path.write_text(claude_code_session(2_000_000), encoding="utf-8")
    work = folder / "work"
    return compare_session(load_recording(path), WhatIfOptions(workdir=work)), work


def test_every_strategy_runs_and_its_totals_are_its_rows(
        long_session: tuple[WhatIf, Path]) -> None:
    whatif, _ = long_session
    assert [s.name for s in whatif.strategies] == list(STRATEGIES)
    assert whatif.requests > 250
    for run_ in whatif.strategies:
        assert run_.error is None, (run_.name, run_.error)
        assert len(run_.requests) == whatif.requests
        assert [r.index for r in run_.requests] == list(range(1, whatif.requests + 1))
        billed = run_.side
        for row in run_.requests:
            billed = billed + row.usage
            if not row.counted:
                assert row.usage.cache_read + row.usage.cache_write_5m == row.tokens
                assert row.usage.input == 0
        assert run_.billed == billed
        assert run_.peak_tokens == max(r.tokens for r in run_.requests)
        # one compaction per request the strategy changed the history before
        assert run_.compactions == sum(1 for r in run_.requests if r.stages) > 0
        assert run_.compactions <= len(run_.requests)
        over = [r.index for r in run_.requests if r.tokens > whatif.window_tokens]
        assert (run_.over_window, run_.first_over_window) == (len(over), min(over, default=None))
        assert run_.cost is not None and run_.lesson
        assert 0 <= run_.results_recoverable <= run_.results_left


def test_original_of_a_long_session_is_its_usage(long_session: tuple[WhatIf, Path]) -> None:
    whatif, _ = long_session
    original = only(whatif, "original")
    recording = load_recording(whatif.path)
    recorded = [Usage.from_api(e.usage) for e in recording.exchanges]
    assert all(r.counted for r in original.requests)
    assert [r.usage for r in original.requests] == [u.billed() for u in recorded if u]
    assert original.compactions == len(recording.compactions) >= 2


def test_recoverable_results_are_byte_exact_in_the_archive(
        long_session: tuple[WhatIf, Path]) -> None:
    """Every file an engine archived holds the recorded result byte for byte; the ones
    that say so are all recoverable, truncate's none."""
    whatif, work = long_session
    originals = {}
    for step in load_recording(whatif.path).steps:
        for message in step.input:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    originals[block["tool_use_id"]] = block["content"]
    for name in ("s08", "s08-window", "api-clear-tool-uses"):
        run_ = only(whatif, name)
        assert run_.results_left > 0 and run_.results_recoverable == run_.results_left, name
        archive = Archive(work / name)
        for entry in archive.manifest().values():
            held = (work / name / entry.path).read_text(encoding="utf-8")
            assert held == originals[entry.tool_use_id], (name, entry.path)
    truncate = only(whatif, "truncate")
    assert truncate.results_left > 0 and truncate.results_recoverable == 0


def test_every_strategy_is_judged_on_the_same_facts(long_session: tuple[WhatIf, Path]) -> None:
    """The facts come from the trajectory alone, so every strategy is checked on all of
    them; the course's small budget keeps fewer than the window-wide sliding window."""
    whatif, _ = long_session
    facts = find_facts(load_recording(whatif.path))
    assert facts
    for run_ in whatif.strategies:
        assert sorted((c.fact.needed_at, c.fact.result_id) for c in run_.facts) == \
            sorted((f.needed_at, f.result_id) for f in facts)
    assert only(whatif, "truncate").facts_kept > only(whatif, "s08").facts_kept


def test_a_lesson_is_the_run_s_own_figures_against_the_recorded_run() -> None:
    fact = Fact("t1", "Read", 1, 5, "reread", "a.py")
    row = RequestCost(1, 400, 100, Usage(cache_write_5m=100, output=5))
    original = StrategyRun("original", "", (row,), cost=2.0)
    masked = StrategyRun("observation-masking", "", (replace(row, tokens=131_400),),
                         cost=0.96, compactions=2, results_left=14, results_recoverable=14,
                         facts=(FactCheck(fact, False), FactCheck(fact, True)))
    assert lesson(masked, original) == (
        "costs 48% of the recorded run, peak 131k tokens, 2 compactions, 14 tool results "
        "left the context (all recoverable), 1 of 2 relied-on facts gone (all re-read "
        "after the drop)")
    assert lesson(original, original).startswith("as recorded: 0% of input read from the "
                                                 "cache, peak 100 tokens")


def test_the_window_strategies_stay_inside_the_window_with_the_overhead(
        long_session: tuple[WhatIf, Path]) -> None:
    """Their limits are the window less the fixed overhead: a strategy held to its limit
    never sends what the API would refuse (they went over by the overhead before)."""
    whatif, _ = long_session
    assert whatif.overhead_tokens > 0 and whatif.window_tokens == 200_000
    for name in ("s08-window", "truncate"):
        run_ = only(whatif, name)
        assert run_.peak_tokens > whatif.window_tokens * 0.8  # the window was reached
        assert run_.peak_tokens <= whatif.window_tokens, name
        assert run_.over_window == 0 and run_.first_over_window is None


def test_the_json_spells_the_side_calls_so_its_totals_are_sums(
        long_session: tuple[WhatIf, Path]) -> None:
    whatif, _ = long_session
    for data in whatif.to_json()["strategies"]:
        rows = data["per_request"]
        for key, total in (("input", "input_tokens"), ("cache_write", "cache_write_tokens"),
                           ("cache_read", "cache_read_tokens"), ("output", "output_tokens")):
            assert sum(r[key] for r in rows) + data["side"][key] == data[total], (
                data["name"], key)


def test_without_a_fitted_intercept_the_overhead_is_what_the_counts_carried() -> None:
    """Counts that do not follow the chars (no sane fit): the modelled requests still carry
    what the recorded ones counted beyond their chars, so a strategy that changes nothing
    is modelled at the recorded size, not at its chars alone."""
    tokens = [50_000] * 4  # flat counts: no slope, no sane ratio
    recording = rounds(["x" * 400] * 3)
    for exchange, count in zip(recording.exchanges, tokens, strict=True):
        exchange.usage = {"input_tokens": count, "output_tokens": 10}
    whatif = run(recording, "original", "s08")
    modelled = [r.tokens for r in only(whatif, "s08").requests]
    assert (whatif.ratio_source, whatif.chars_per_token) == ("estimate", 4.0)
    assert whatif.overhead_tokens > 49_000  # it was 0: every strategy looked 99% cheaper
    assert all(abs(m - t) <= 0.02 * t for m, t in zip(modelled, tokens, strict=True))


REUSED_IDS = (Path(__file__).parents[2] / "fixtures" / "replay" / "claude-code-2.1.197"
              / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl")  # toolu_01read answers 3 Reads


def test_a_strategy_that_compacts_nothing_keeps_every_fact_though_ids_repeat() -> None:
    """The second answer under ``toolu_01read`` ("file unchanged") is another result: the
    re-reads are of the first, which a history never compacted still holds."""
    whatif = run(load_recording(REUSED_IDS), "s08")
    s08 = only(whatif, "s08")
    assert s08.compactions == 0 and len(s08.facts) == 2
    assert s08.facts_kept == len(s08.facts)


def test_every_result_that_left_under_a_repeated_id_is_recoverable(tmp_path: Path) -> None:
    """Low triggers archive each ``toolu_01read`` result in turn: each is its own departure,
    and the archive holds each one's bytes."""
    whatif = run(load_recording(REUSED_IDS), "api-clear-tool-uses", "api-compaction",
                 "observation-masking", clear_trigger_tokens=100, clear_keep=1, mask_keep=1,
                 compaction_trigger_tokens=100, workdir=tmp_path)
    for strategy in whatif.strategies:
        assert strategy.error is None and strategy.results_left > 0, strategy.name
        assert strategy.results_recoverable == strategy.results_left, strategy.name
