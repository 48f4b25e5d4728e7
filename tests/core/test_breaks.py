"""Break switches (teaching lab): each one shows its consequence, and only when it is on.

Without a switch, no compaction path may ever produce an API violation or a loss (a
hypothesis property over random histories and thresholds). With one, the consequence must be
visible where a learner looks: the validator's violations, ``"where": "lost"`` in the ledger,
a placeholder for a result the model never saw, a file that holds only a pointer, the stage
order — and, in a headless run, ``violation`` events before the model call.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.archive.store import EARLIER_PREFIX, RESULTS_DIR, Archive, pointer_path
from core.compact.context import CompactContext, StageRun
from core.compact.micro import micro_compact
from core.compact.pipeline import Compactor
from core.compact.stages import MICRO_COMPACT
from core.config import BREAK_SWITCHES, Thresholds
from core.events import Recorder
from core.measure import Measured
from core.messages import validate_pairs
from core.scenarios import bundled_names, find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from tests.core.compact.builders import assistant, result, results, turns, use, user
from tests.core.compact.test_properties import THRESHOLDS, histories

EXTRAS = ("unseen", "points_to")  # ledger fields only a break switch writes


def make(tmp: Path, breaks: set[str] = frozenset(), **limits: Any) -> tuple[Compactor, Recorder]:
    rec = Recorder()
    return Compactor(tmp, Thresholds(**limits), emit=rec, breaks=frozenset(breaks)), rec


def prepare(comp: Compactor, messages: list[dict]) -> list[dict]:
    return asyncio.run(comp.prepare(messages, "go"))


def stage_names(rec: Recorder) -> list[str]:
    return [e.stage for e in rec.events if e.type == "stage"]


def kinds(messages: list[dict]) -> set[str]:
    return {v.kind for v in validate_pairs(messages)}


# -- without switches: never a violation, never a loss -------------------------------------


def assert_safe(comp: Compactor, messages: list[dict]) -> None:
    assert validate_pairs(messages, allow_pending=False) == []
    for entry in comp.ledger:
        assert entry["where"] != "lost", entry
        assert not set(EXTRAS) & set(entry), entry
    assert comp.ctx.violation_origin == {}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), THRESHOLDS, st.integers(0, 3))
def test_without_switches_no_path_violates_or_loses(history, limits, extra_turns):
    """prepare, more turns, prepare again, reactive, manual: all safe, all recoverable."""
    with tempfile.TemporaryDirectory() as tmp:
        comp = Compactor(Path(tmp), limits)
        out = asyncio.run(comp.prepare(history, "go"))
        assert_safe(comp, out)
        for t in range(extra_turns):  # the conversation goes on over compacted history
            out = [*out, assistant(use(f"more{t}"), text="again"),
                   results(result(f"more{t}", "y" * 3_000))]
            out = asyncio.run(comp.prepare(out, "go"))
            assert_safe(comp, out)
        out = asyncio.run(comp.reactive(out, "go"))
        assert_safe(comp, out)
        out = asyncio.run(comp.compact(out, "go"))
        assert_safe(comp, out)


@pytest.mark.parametrize("name", bundled_names())
def test_bundled_scenarios_without_switches_emit_no_violation_and_lose_nothing(name, tmp_path):
    rec = Recorder()
    ok = asyncio.run(AgentSession(RunOptions(workspace=tmp_path, scenario=find_scenario(name)),
                            rec).run())
    assert ok
    assert [e for e in rec.events if e.type == "violation"] == []
    assert [x for e in rec.events if e.type == "stage" for x in e.ledger
            if x["where"] == "lost" or set(EXTRAS) & set(x)] == []


# -- pair-protection ------------------------------------------------------------------------


def snip_fixture() -> list[dict]:
    """Both snip cut points land inside a pair once protection is off (max_messages=7).

    head = messages[:3] ends on an assistant tool_use; the tail starts on its results' kin.
    """
    pairs = turns(10, size=10)[1:]
    return [user("start"), user("go on"), *pairs]


def test_pair_protection_off_snip_leaves_orphans_and_unanswered_uses(tmp_path):
    safe, _ = make(tmp_path / "safe", max_messages=7)
    assert validate_pairs(prepare(safe, snip_fixture())) == []

    comp, rec = make(tmp_path / "broken", {"pair-protection"}, max_messages=7)
    out = prepare(comp, snip_fixture())
    assert stage_names(rec) == ["snip_compact"]
    assert kinds(out) == {"orphan_tool_result", "unanswered_tool_use"}
    for v in validate_pairs(out):
        assert comp.violation_stage(v) == "snip_compact"


def test_pair_protection_off_reactive_leaves_an_orphan(tmp_path):
    history = turns(4, size=10)  # 9 messages: keeping 3 starts the tail on a results message
    safe, _ = make(tmp_path / "safe", reactive_keep=3)
    assert validate_pairs(asyncio.run(safe.reactive(history, "go"))) == []

    comp, _ = make(tmp_path / "broken", {"pair-protection"}, reactive_keep=3)
    out = asyncio.run(comp.reactive(history, "go"))
    assert [(v.kind, v.message_index) for v in validate_pairs(out)] == [
        ("orphan_tool_result", 1)]
    assert comp.violation_stage(validate_pairs(out)[0]) == "reactive_compact"


def test_compact_command_reports_the_violations_as_json(tmp_path, capsys):
    from tui.cli import main

    path = tmp_path / "history.json"
    path.write_text(json.dumps(snip_fixture()), encoding="utf-8")
    args = ["compact", str(path), "--json", "--max-messages", "7"]
    assert main([*args, "--workdir", str(tmp_path / "a")]) == 0
    assert json.loads(capsys.readouterr().out)["violations"] == []
    assert main([*args, "--workdir", str(tmp_path / "b"), "--break", "pair-protection"]) == 0
    found = json.loads(capsys.readouterr().out)["violations"]
    assert {v["kind"] for v in found} == {"orphan_tool_result", "unanswered_tool_use"}
    assert all(set(v) == {"kind", "message_index", "tool_use_id"} for v in found)


# -- unseen-guard ---------------------------------------------------------------------------


def unseen_fixture() -> list[dict]:
    """One seen result, then a batch of five the model has not seen yet (no reply after it)."""
    batch = [f"new{i}" for i in range(5)]
    return [user("start"), assistant(use("old")), results(result("old", "o" * 3_000)),
            assistant(*(use(i) for i in batch)),
            results(*(result(i, f"{i}:" + "n" * 3_000) for i in batch))]


def micro_once(tmp: Path, breaks: set[str]) -> tuple[Archive, list[dict]]:
    ctx = CompactContext(Archive(tmp), Thresholds(), breaks=frozenset(breaks))
    history = Measured(unseen_fixture())
    micro_compact(StageRun(MICRO_COMPACT, ctx, history)).finish()
    return ctx.archive, history.messages


def unseen_placeholders(messages: list[dict]) -> list[str]:
    return [b["tool_use_id"] for b in messages[-1]["content"]
            if b["content"].startswith(EARLIER_PREFIX)]


def test_unseen_guard_off_micro_compacts_results_the_model_never_saw(tmp_path):
    archive, out = micro_once(tmp_path / "safe", set())
    assert unseen_placeholders(out) == [] and archive.ledger == []

    archive, out = micro_once(tmp_path / "broken", {"unseen-guard"})
    assert unseen_placeholders(out) == ["new0", "new1"]  # all but the 3 most recent
    assert [x["tool_use_id"] for x in archive.ledger if x.get("unseen")] == ["new0", "new1"]


def test_unseen_guard_off_shows_in_the_pipelines_micro_stage(tmp_path):
    def micro_ids(breaks: set[str], where: Path) -> list[str]:
        comp, rec = make(where, breaks, context_limit=5_000)
        prepare(comp, unseen_fixture())
        return [i for e in rec.events if e.type == "stage" and e.stage == "micro_compact"
                for i in e.tool_use_ids]

    assert micro_ids(set(), tmp_path / "safe") == []
    assert micro_ids({"unseen-guard"}, tmp_path / "broken") == ["old", "new0", "new1"]


# -- persist-before-placeholder -------------------------------------------------------------


def test_persist_before_placeholder_off_loses_the_original(tmp_path):
    safe, _ = make(tmp_path / "safe", context_limit=6_000)
    prepare(safe, turns(5, 1, 1_000))  # micro alone brings it under the trigger
    assert safe.ledger and all((tmp_path / "safe" / x["where"]).is_file() for x in safe.ledger)

    comp, rec = make(tmp_path / "broken", {"persist-before-placeholder"}, context_limit=6_000)
    out = prepare(comp, turns(5, 1, 1_000))
    assert stage_names(rec) == ["micro_compact"]
    assert [(x["tool_use_id"], x["where"]) for x in comp.ledger] == [("t0_0", "lost")]
    assert not list((tmp_path / "broken" / RESULTS_DIR).glob("*.txt"))  # no file at all
    pointers = [pointer_path(b["content"]) for m in out if isinstance(m["content"], list)
                for b in m["content"] if pointer_path(b.get("content"))]
    assert len(pointers) == 1  # the placeholder points at a file that was never written
    assert not any((tmp_path / "broken" / p).exists() for p in pointers)


def test_persist_before_placeholder_off_fit_keeps_only_a_preview(tmp_path):
    comp, rec = make(tmp_path, {"persist-before-placeholder"}, context_limit=10_000)
    out = prepare(comp, turns(5, 1, 3_000))
    assert stage_names(rec) == ["micro_compact", "fit_tool_results"]
    assert {x["where"] for x in comp.ledger} == {"lost"}
    wrappers = [b["content"] for m in out if isinstance(m["content"], list)
                for b in m["content"] if str(b.get("content")).startswith("<persisted-output>")]
    assert wrappers  # a 1,000-char preview stays; the other 2,000 chars exist nowhere
    assert not list((tmp_path / RESULTS_DIR).glob("*.txt"))


def test_persist_before_placeholder_off_budget_wrapper_has_no_file(tmp_path):
    history = [user("start"), assistant(use("big")), results(result("big", "b" * 50_000))]
    comp, _ = make(tmp_path, {"persist-before-placeholder"}, batch_limit=20_000,
                   large_result=10_000)
    out = prepare(comp, history)
    assert [(x["stage"], x["where"]) for x in comp.ledger] == [("tool_result_budget", "lost")]
    path = pointer_path(out[-1]["content"][0]["content"])
    assert path and not (tmp_path / path).exists()


# -- pointer-idempotence --------------------------------------------------------------------


def micro_twice(tmp: Path, breaks: set[str]) -> tuple[Archive, list[dict], list[dict]]:
    """micro_compact without a target, twice: the second pass sees its own placeholders."""
    ctx = CompactContext(Archive(tmp), Thresholds(keep_recent=1), breaks=frozenset(breaks))
    history = Measured(turns(4, 1, 1_000))
    first_run = micro_compact(StageRun(MICRO_COMPACT, ctx, history))
    first_run.finish()
    first = list(history.messages)
    second_run = micro_compact(StageRun(MICRO_COMPACT, ctx, history))
    second_run.finish()
    return ctx.archive, first, history.messages


def test_pointer_idempotence_off_chains_a_pointer_to_a_pointer(tmp_path):
    archive, first, second = micro_twice(tmp_path / "safe", set())
    assert second == first  # a placeholder compacted again is left as it is

    archive, first, second = micro_twice(tmp_path / "broken", {"pointer-idempotence"})
    assert second != first
    chained = [x for x in archive.ledger if "points_to" in x]
    assert chained
    for entry in chained:
        held = (tmp_path / "broken" / entry["where"]).read_text(encoding="utf-8")
        assert pointer_path(held) == entry["points_to"]  # the file holds only a pointer
        assert archive.recover(entry["tool_use_id"], entry["where"]) == held  # not the result


# -- stage-order ----------------------------------------------------------------------------


def stage_order_fixture() -> list[dict]:
    """Old seen results plus one huge new batch the budget alone would have handled."""
    out = turns(4, 1, 5_000)
    return [*out, assistant(use("huge")), results(result("huge", "h" * 50_000))]


def test_stage_order_off_micro_runs_before_the_budget(tmp_path):
    limits = {"context_limit": 30_000, "batch_limit": 20_000, "large_result": 10_000,
              "keep_recent": 1}
    safe, safe_rec = make(tmp_path / "safe", **limits)
    prepare(safe, stage_order_fixture())
    assert stage_names(safe_rec) == ["tool_result_budget"]  # the budget was enough

    comp, rec = make(tmp_path / "broken", {"stage-order"}, **limits)
    prepare(comp, stage_order_fixture())
    names = stage_names(rec)
    assert names[:2] == ["micro_compact", "tool_result_budget"]
    micro = next(e for e in rec.events if e.type == "stage")
    assert len(micro.tool_use_ids) == 3  # old results compacted for nothing


# -- the headless run: every switch shows on the course's story -----------------------------


def play(tmp: Path, breaks: set[str]) -> list[Any]:
    """The story under ``breaks``; only broken pairs end it early (the API refuses them)."""
    rec = Recorder()
    options = RunOptions(workspace=tmp, scenario=find_scenario("refactor-auth"),
                         breaks=frozenset(breaks))
    ok = asyncio.run(AgentSession(options, rec).run())
    assert ok is ("pair-protection" not in breaks)
    return rec.events


def consequence(events: list[Any], switch: str) -> bool:
    ledger = [x for e in events if e.type == "stage" for x in e.ledger]
    if switch == "pair-protection":  # marked before the call, then refused by the "API"
        refused = [e for e in events if e.type == "error"
                   and e.message.startswith("HTTP 400 invalid_request_error: messages.")]
        return any(e.type == "violation" for e in events) and bool(refused) \
            and events[-1].type == "run_end" and not events[-1].ok
    if switch == "unseen-guard":
        return any(x.get("unseen") for x in ledger)
    if switch == "persist-before-placeholder":
        return any(x["where"] == "lost" for x in ledger)
    if switch == "pointer-idempotence":
        return any("points_to" in x for x in ledger)
    assert switch == "stage-order"
    per_call: list[list[str]] = [[]]
    for e in events:
        if e.type == "stage":
            per_call[-1].append(e.stage)
        elif e.type == "model_request":
            per_call.append([])
    return any({"micro_compact", "tool_result_budget"} <= set(names)
               and names.index("micro_compact") < names.index("tool_result_budget")
               for names in per_call)


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return play(tmp_path_factory.mktemp("unbroken"), set())


@pytest.mark.parametrize("switch", BREAK_SWITCHES)
def test_each_switch_shows_its_consequence_in_a_headless_run(switch, tmp_path, unbroken):
    events = play(tmp_path, {switch})
    start = next(e for e in events if e.type == "run_start")
    assert start.breaks == (switch,)
    assert consequence(events, switch)
    assert not consequence(unbroken, switch)


def test_violation_events_come_before_the_call_and_name_the_stage(tmp_path):
    events = play(tmp_path, {"pair-protection"})
    types = [e.type for e in events]
    first = types.index("violation")
    assert types[first + 1:].index("model_request") < types[first + 1:].index("error")
    violation = events[first]
    assert violation.kind == "orphan_tool_result"
    assert violation.stage == "reactive_compact"
    # the call is refused with the Messages API's own words, for the block the violation names
    error = next(e for e in events[first:] if e.type == "error")
    assert error.kind == "api" and error.message == (
        f"HTTP 400 invalid_request_error: messages.{violation.message_index}.content.0: "
        f"unexpected `tool_use_id` found in `tool_result` blocks: {violation.tool_use_id}. "
        f"Each `tool_result` block must have a corresponding `tool_use` block in the "
        f"previous message.")
    assert violation.to_json().keys() >= {"kind", "message_index", "tool_use_id", "stage"}


# -- the API's refusal, worded as the API words it ------------------------------------------


def test_api_pairing_error_words_both_refusals_as_the_messages_api_does():
    from core.messages import api_pairing_error

    use = {"role": "assistant", "content": [
        {"type": "text", "text": "reading"},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}},
        {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}}]}
    answer = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "y"}]}
    go = {"role": "user", "content": "go"}
    assert api_pairing_error([go, use, answer]) is None
    assert api_pairing_error([go, use]) is None  # the tools are about to run
    assert api_pairing_error([go, use, go]) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: toolu_a, toolu_b. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message.")
    assert api_pairing_error([go, {"role": "assistant", "content": "ok"}, answer]) == (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_a. Each `tool_result` block must have a corresponding `tool_use` block in "
        "the previous message.")


def test_the_scripted_model_refuses_a_broken_history_before_using_its_script():
    from core.providers.base import ModelCall, ProviderError
    from core.providers.scripted import ScriptedProvider
    from core.scenarios.model import Reply, Turn

    provider = ScriptedProvider()
    provider.begin_turn(Turn(user="go", replies=(Reply(say="fine"),)))
    orphan = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}]}]
    with pytest.raises(ProviderError) as refused:
        asyncio.run(provider.complete(ModelCall(purpose="main", messages=orphan, system="")))
    assert refused.value.status == 400 and refused.value.kind == "api"
    assert str(refused.value).startswith("HTTP 400 invalid_request_error: messages.0.content.0")
    whole = [{"role": "user", "content": "go"}]
    reply = asyncio.run(provider.complete(ModelCall(purpose="main", messages=whole, system="")))
    assert reply.text == "fine"  # the script was not consumed by the refused call
