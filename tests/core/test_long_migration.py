"""The ``long-migration`` scenario proves pinned context end to end: twelve modules migrated one
per request on a small budget, compact_history firing again and again (and one reactive
compact), and after every turn a probe: could the model still tell which modules are done?

Run headless with ``--json`` (as a script would), then in-process with a provider that keeps
every system prompt, and once more with pinning off to show what the work log is worth.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from core.events import Recorder
from core.providers.base import ModelCall, ModelReply, TextSink
from core.providers.scripted import ScriptedProvider
from core.scenarios import find_scenario
from core.sources.agent.session import AgentSession, RunOptions
from core.sources.agent.worklog import load_worklog
from tui.cli import main

RULE = "Migrated modules keep their public names; add a `# migrated` header line."
MODULES = [f"app/mod_{n:02d}.py" for n in range(1, 13)]

Events = list[dict[str, Any]]


def of(events: Events, kind: str) -> Events:
    return [e for e in events if e["type"] == kind]


def stages(events: Events, name: str) -> Events:
    return [e for e in of(events, "stage") if e["stage"] == name]


class SystemRecorder(ScriptedProvider):
    """The scripted provider, keeping a copy of every main call it answered."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[ModelCall] = []

    async def complete(self, call: ModelCall, on_text: TextSink | None = None) -> ModelReply:
        if call.purpose == "main":
            self.seen.append(ModelCall(call.purpose, json.loads(json.dumps(call.messages)),
                                       call.system))
        return await super().complete(call, on_text)


def by_turn(events: Events) -> list[Events]:
    """The events of each turn (from its turn_start to the next one)."""
    turns: list[Events] = []
    for event in events:
        if event["type"] == "turn_start":
            turns.append([])
        if turns:
            turns[-1].append(event)
    return turns


@pytest.fixture(scope="module")
def headless(tmp_path_factory: pytest.TempPathFactory) -> tuple[Events, Path]:
    """One headless run shared by the read-only checks below (``--json`` on stdout)."""
    workspace = tmp_path_factory.mktemp("long-migration")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["run", "--headless", "--scenario", "long-migration", "--workspace",
                     str(workspace), "--json"])
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 0, events[-3:]
    return events, workspace


def test_it_runs_to_a_clean_end_with_several_compactions(headless):
    events, _ = headless
    scenario = find_scenario("long-migration")
    assert events[-1]["type"] == "run_end" and events[-1]["ok"] is True
    assert events[-1]["turns"] == scenario.turn_count == 13
    assert of(events, "error") == []
    assert len(stages(events, "compact_history")) >= 3
    assert len(stages(events, "reactive_compact")) == 1


def test_every_probe_is_answerable_and_every_compaction_is_followed_by_one(headless):
    events, _ = headless
    scenario = find_scenario("long-migration")
    expected = [p for s in scenario.sessions for t in s.turns for p in t.probes]
    probes = of(events, "probe")
    assert [(p["ask"], p["expect"]) for p in probes] == [(p.ask, p.expect) for p in expected]
    assert all(p["answerable"] for p in probes), [p for p in probes if not p["answerable"]]
    for turn in by_turn(events):
        if stages(turn, "compact_history") or stages(turn, "reactive_compact"):
            assert any(p["expect"] == "app/mod_01.py" for p in of(turn, "probe"))
    # the oldest module is answered by the pinned work log, after every compaction
    for probe in probes:
        if probe["expect"] == "app/mod_01.py":
            assert "worklog" in probe["found_in"]
        if probe["expect"].startswith("add a `# migrated`"):
            assert probe["found_in"][0] == "rules:CTXLAB.md"


def test_no_module_is_migrated_twice_and_each_follows_the_rule(headless):
    events, workspace = headless
    writes = [c for c in of(events, "tool_call") if c["name"] == "write_file"]
    paths = [c["input"]["path"] for c in writes]
    assert len(paths) == len(set(paths))  # every write_file path in the run is unique
    assert sorted(paths) == MODULES
    for call in writes:
        assert call["input"]["content"].startswith("# migrated\n")
    log = load_worklog(workspace, "default")
    assert [f.path for f in log.files] == MODULES
    assert all(f.writes == 1 and f.edits == 0 for f in log.files)
    assert [c.exit_code for c in log.commands].count(1) == 1  # the grep for TODO found none


def test_the_rules_are_in_every_main_system_prompt_event(headless):
    events, _ = headless
    prompts = of(events, "system_prompt")
    mains = [e for e in of(events, "model_request") if e["purpose"] == "main"]
    assert len(prompts) == len(mains) > 40
    for prompt in prompts:
        sections = {s["name"]: s for s in prompt["sections"]}
        assert sections["rules:CTXLAB.md"]["category"] == "pinned"
        assert sections["rules:CTXLAB.md"]["source"] == "CTXLAB.md"
    assert all("worklog" in {s["name"] for s in p["sections"]} for p in prompts[3:])


def run_in_process(workspace: Path, pinned: bool) -> tuple[Recorder, SystemRecorder]:
    provider = SystemRecorder()
    recorder = Recorder()
    options = RunOptions(workspace=workspace, scenario=find_scenario("long-migration"),
                         pinned=pinned)
    assert asyncio.run(AgentSession(options, recorder, provider=provider).run())
    return recorder, provider


def test_every_main_call_carries_the_rule_and_no_message_does(tmp_path):
    _, provider = run_in_process(tmp_path, pinned=True)
    assert len(provider.seen) > 40
    for call in provider.seen:
        assert RULE in (call.system or "")
        assert RULE not in json.dumps(call.messages, ensure_ascii=False)


def test_without_pinned_context_the_rule_is_forgotten_and_progress_rests_on_summaries(
        tmp_path):
    recorder, provider = run_in_process(tmp_path, pinned=False)
    probes = [e for e in recorder.events if e.type == "probe"]
    # the rule was said once, early: summaries do not keep it, the pinned CTXLAB.md does
    assert not any(p.answerable for p in probes if p.expect.startswith("add a `# migrated`"))
    # the modules written survive only as the summaries' folded "Files touched" (no work log)
    early = [p for p in probes if p.expect == "app/mod_01.py" and p.answerable]
    assert early and all(p.found_in == ("messages",) for p in early)
    assert all(RULE not in (call.system or "") for call in provider.seen)
