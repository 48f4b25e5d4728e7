"""The bundled scenarios, run headless, fire what each one promises; the scenario format's
loader reports every mistake as ``file:line: message``.

Runs go through ``ctxlab run --headless --scenario NAME --json`` in-process and read the JSONL
event stream back, as a script would.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.compact.stages import pipeline_stages
from core.config import THRESHOLD_KEYS, Thresholds
from core.events import Recorder
from core.providers.base import ModelCall, ModelReply, TextSink
from core.providers.scripted import SCRIPTED_ERRORS, ScriptedProvider
from core.scenarios import bundled_names, find_scenario
from core.scenarios.model import (
    SCRIPTED_ERROR_NAMES,
    SIDE_PURPOSES,
    ScenarioError,
    parse_scenario,
)
from core.scenarios.workspaces import GENERATORS
from core.sources.agent.session import AgentSession, RunOptions
from tui.cli import main

Events = list[dict[str, Any]]


def run_headless(capsys: pytest.CaptureFixture[str], name: str, workspace: Path) -> Events:
    code = main(["run", "--headless", "--scenario", name, "--workspace", str(workspace),
                 "--json"])
    out = capsys.readouterr().out
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0, events[-3:]
    return events


def of(events: Events, kind: str) -> Events:
    return [e for e in events if e["type"] == kind]


def stages(events: Events, name: str | None = None) -> Events:
    return [e for e in of(events, "stage") if name is None or e["stage"] == name]


def assert_archives_exist(events: Events, workspace: Path) -> None:
    """Every file a stage names exists, and no ledger entry says "lost"."""
    for stage in stages(events):
        for rel in stage["files"]:
            assert (workspace / rel).is_file(), rel
        for entry in stage["ledger"]:
            assert entry["where"] != "lost"
            assert (workspace / entry["where"]).is_file()


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_scenario_runs_to_a_clean_end(capsys, tmp_path, name):
    events = run_headless(capsys, name, tmp_path)
    scenario = find_scenario(name)
    assert events[0]["type"] == "run_start" and events[0]["scenario"] == name
    assert events[-1] == {**events[-1], "type": "run_end", "ok": True,
                          "turns": scenario.turn_count}
    assert of(events, "error") == []
    assert len(of(events, "turn_start")) == scenario.turn_count
    ids = [e["id"] for e in of(events, "tool_call")]
    assert ids == [e["id"] for e in of(events, "tool_result")]
    assert_archives_exist(events, tmp_path)


def test_refactor_auth_fires_every_stage_and_every_memory_path(capsys, tmp_path):
    events = run_headless(capsys, "refactor-auth", tmp_path)
    fired = {e["stage"] for e in stages(events)}
    assert fired == set(pipeline_stages()) == {
        "tool_result_budget", "snip_compact", "micro_compact", "fit_tool_results",
        "compact_history", "reactive_compact", "manual_compact"}
    written = of(events, "memory_written")
    assert len(written) >= 1
    index = (tmp_path / ".memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert f"- [{written[0]['name']}](" in index  # still there after consolidation
    rejected = of(events, "memory_rejected")
    assert len(rejected) >= 1
    reasons = " | ".join(r["reason"] for r in rejected)
    assert "current_task" in reasons  # the "this session only" restriction
    assert "for now" in reasons  # a temporary marker
    assert len(of(events, "memory_selected")) >= 1
    assert any(e["files"] for e in of(events, "memory_selected"))
    (consolidated,) = of(events, "memory_consolidated")
    assert consolidated["after"] < consolidated["before"]
    assert of(events, "memory_consolidation_failed") == []
    # the scripted prompt-too-long was recovered, not reported
    (reactive,) = stages(events, "reactive_compact")
    assert reactive["after_chars"] < reactive["before_chars"]


def test_big_log_is_persisted_by_the_budget_at_default_thresholds(capsys, tmp_path):
    assert find_scenario("big-log").thresholds == {}
    events = run_headless(capsys, "big-log", tmp_path)
    read = next(e for e in of(events, "tool_call") if e["name"] == "read_file")
    original = (tmp_path / "logs" / "ingest.log").read_text(encoding="utf-8")
    assert len(original) > Thresholds().batch_limit

    (budget,) = stages(events, "tool_result_budget")
    assert budget["tool_use_ids"] == [read["id"]]
    (persisted,) = budget["files"]
    assert persisted.startswith(".task_outputs/tool-results/")
    assert (tmp_path / persisted).read_text(encoding="utf-8") == original  # byte-exact
    assert budget["ledger"] == [{"tool_use_id": read["id"], "stage": "tool_result_budget",
                                 "chars": len(original), "where": persisted}]
    # the model never saw the megabyte: every main request stayed small
    mains = [e for e in of(events, "model_request") if e["purpose"] == "main"]
    assert max(e["chars"] for e in mains) < 10_000
    assert {e["stage"] for e in stages(events)} == {"tool_result_budget"}


def test_long_chat_snips_the_middle(capsys, tmp_path):
    events = run_headless(capsys, "long-chat", tmp_path)
    snips = stages(events, "snip_compact")
    assert snips
    for snip in snips:
        assert snip["before_messages"] > 50 >= snip["after_messages"]
        (transcript,) = snip["files"]
        assert transcript.startswith(".transcripts/transcript_")
    mains = [e for e in of(events, "model_request") if e["purpose"] == "main"]
    assert max(e["messages"] for e in mains) <= 50


class SystemRecorder(ScriptedProvider):
    """Scripted, and remembers which request each main call's system prompt served."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, ModelCall]] = []

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        if call.purpose == "main" and self._turn is not None:
            # the loop keeps appending to the list it sent: keep a copy of what was sent
            sent = ModelCall(call.purpose, json.loads(json.dumps(call.messages)), call.system)
            self.seen.append((self._turn.user, sent))
        return await super().complete(call, on_text)


def test_two_sessions_recalls_session_one_memory_in_session_two(capsys, tmp_path):
    events = run_headless(capsys, "two-sessions", tmp_path / "cli")
    (written,) = of(events, "memory_written")
    second_request = find_scenario("two-sessions").sessions[1].turns[0].user
    starts = [i for i, e in enumerate(events) if e["type"] == "turn_start"]
    assert events[starts[1]]["request"] == second_request
    in_session_two = events[starts[1]:]
    selected = of(in_session_two, "memory_selected")
    assert selected and written["file"] in selected[0]["files"]
    prompt = of(in_session_two, "system_prompt")[0]
    assert "Relevant memory records" in [s["name"] for s in prompt["sections"]]

    # the same run in-process, reading the system prompt session 2 actually sent
    scenario = find_scenario("two-sessions")
    provider = SystemRecorder()
    recorder = Recorder()
    workspace = tmp_path / "runner"
    ok = asyncio.run(AgentSession(RunOptions(workspace=workspace, scenario=scenario), recorder,
                            provider=provider).run())
    assert ok
    record_text = (workspace / ".memory" / written["file"]).read_text(encoding="utf-8")
    body = record_text.split("\n---\n", 1)[1].strip()
    first_s2 = next(call for request, call in provider.seen if request == second_request)
    assert len(first_s2.messages) == 1  # a fresh conversation: nothing carried over...
    assert body and json.dumps(body)[1:-1] in (first_s2.system or "")  # ...but memory was
    first_s1 = provider.seen[0][1]
    assert json.dumps(body)[1:-1] not in (first_s1.system or "")


# -- the format -------------------------------------------------------------------------------

def test_every_scripted_error_name_has_an_implementation():
    assert set(SCRIPTED_ERROR_NAMES) == set(SCRIPTED_ERRORS)


MINIMAL = """\
name: m
workspace: long_chat
sessions:
  - turns:
      - user: hi
        replies:
          - say: hello
"""


def test_a_minimal_scenario_parses():
    scenario = parse_scenario(MINIMAL, "m.yaml")
    assert scenario.turn_count == 1
    (turn,) = scenario.sessions[0].turns
    assert turn.user == "hi" and turn.replies[0].say == "hello"


def test_side_answers_are_one_per_call():
    scenario = parse_scenario(MINIMAL + "        select: [[0], [1, 2]]\n"
                                        "        summary: Short summary.\n", "m.yaml")
    side = scenario.sessions[0].turns[0].side
    assert side == {"select": ([0], [1, 2]), "summary": ("Short summary.",)}


@pytest.mark.parametrize(("text", "line", "message"), [
    ("name: x\nsessions: [\n", 3, "invalid YAML"),
    (MINIMAL.replace("say: hello", "tools:\n              - frobnicate: {}"), 8,
     "unknown tool 'frobnicate'"),
    (MINIMAL.replace("      - user: hi\n", "      - user: hi\n        replys: []\n"), 5,
     "unknown key(s) in a turn: replys"),
    (MINIMAL.replace("- say: hello", "- say: hello\n            mood: calm"), 7,
     "unknown key(s) in a reply: mood"),
    (MINIMAL.replace("- user: hi\n        replies", "- replies"), 5, "a turn needs 'user'"),
    (MINIMAL.replace("say: hello", "error: teapot"), 7, "unknown error 'teapot'"),
    (MINIMAL.replace("name: m\n", ""), 1, "missing 'name'"),
    (MINIMAL + "thresholds: {context_limt: 5}\n", 8, "unknown threshold 'context_limt'"),
    (MINIMAL + "memory:\n  - {name: x}\n", 9, "a seeded memory needs name, type"),
])
def test_format_errors_name_file_and_line(text, line, message):
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "bad.yaml")
    text_of_error = str(caught.value)
    assert text_of_error.startswith(f"bad.yaml:{line}: "), text_of_error
    assert message in text_of_error


# -- docs/SCENARIOS.md is checked against the code ------------------------------------------

SCENARIOS_DOC = Path(__file__).resolve().parents[2] / "docs" / "SCENARIOS.md"


def doc_table_keys(heading: str) -> dict[str, str]:
    """First column (backquoted) → second column of the first table under ``heading``."""
    text = SCENARIOS_DOC.read_text(encoding="utf-8")
    body = text.split(heading, 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]*) \|", body, flags=re.M)
    return {key: value.strip() for key, value in rows}


def test_the_documented_example_is_a_valid_scenario_that_does_what_it_says(tmp_path, capsys):
    text = SCENARIOS_DOC.read_text(encoding="utf-8")
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.yaml"
    path.write_text(example, encoding="utf-8")
    scenario = parse_scenario(example, str(path))
    assert len(scenario.sessions) == 2 and scenario.memory

    events = run_headless(capsys, str(path), tmp_path / "ws")
    assert events[-1]["ok"] is True and of(events, "error") == []
    fired = {e["stage"] for e in stages(events)}
    assert {"tool_result_budget", "reactive_compact", "manual_compact"} <= fired
    (written,) = of(events, "memory_written")
    assert written["name"] == "tabs preference"
    first, *_, last = of(events, "memory_selected")
    assert first["method"] == "model" and first["files"] == ["test-command.md"]
    assert written["file"] in last["files"]  # recalled in the second session


def test_the_documented_thresholds_are_the_real_ones():
    documented = doc_table_keys("### Thresholds")
    defaults = Thresholds()
    assert set(documented) == set(THRESHOLD_KEYS)
    for key, value in documented.items():
        assert float(value) == getattr(defaults, key), key


def test_the_documented_lists_match_the_code():
    assert set(doc_table_keys("## The bundled scenarios")) == set(bundled_names())
    assert set(doc_table_keys("### Sample workspaces")) == set(GENERATORS)
    assert set(doc_table_keys("### Scripted errors")) == set(SCRIPTED_ERROR_NAMES)
    turn_keys = set(doc_table_keys("### A turn"))
    assert turn_keys == {"user", "replies", "probes", *SIDE_PURPOSES}
    top_keys = doc_table_keys("### Top-level keys")
    assert {k for k, v in top_keys.items() if v == "yes"} == {"name", "workspace", "sessions"}
