"""Pinned project rules (core/sources/agent/pinned.py): CTXLAB.md, AGENTS.md and CLAUDE.md
are system-prompt sections re-read before every main call, never part of ``messages``,
never compacted, and a huge, binary or unreadable rules file is a notice, not a crash.

An :class:`~core.sources.agent.loop.Agent` is driven by a small fake provider that keeps a
copy of every call, so each test reads the system prompt each request really carried.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.config import Thresholds
from core.events import Error, Recorder, Stage, SystemPrompt
from core.memory import MemoryStore
from core.providers.base import ModelCall, ModelReply
from core.sources.agent.loop import Agent
from core.sources.agent.pinned import (
    RULES_CHAR_CAP,
    RULES_FILES,
    RULES_SECTION_LIMIT,
    ProjectRules,
    truncation_marker,
)
from core.sources.agent.system_prompt import render
from core.sources.agent.worklog import WORKLOG_BUDGET

Step = ModelReply | Exception | Callable[[ModelCall], "ModelReply | Exception"]


def text(words: str) -> ModelReply:
    return ModelReply(content=[{"type": "text", "text": words}], stop_reason="end_turn")


def tool(name: str, data: dict[str, Any], id: str = "toolu_1") -> ModelReply:
    return ModelReply(content=[{"type": "tool_use", "id": id, "name": name, "input": data}],
                      stop_reason="tool_use")


class FakeProvider:
    """Answers main calls from a list of steps; side calls with a fixed summary text."""

    name, model = "fake", "fake-1"

    def __init__(self, steps: list[Step], summary: str = "SUMMARY") -> None:
        self.steps = list(steps)
        self.summary = summary
        self.calls: list[ModelCall] = []

    async def complete(self, call: ModelCall, on_text: Any = None) -> ModelReply:
        self.calls.append(ModelCall(call.purpose, json.loads(json.dumps(call.messages)),
                                    call.system, call.max_tokens, call.tools))
        if call.purpose != "main":
            return text(self.summary)
        step: Any = self.steps.pop(0) if self.steps else text("(done)")
        if callable(step):
            step = step(call)
        if isinstance(step, Exception):
            raise step
        return step

    def mains(self) -> list[ModelCall]:
        return [c for c in self.calls if c.purpose == "main"]


def agent_for(workspace: Path, steps: list[Step], **options: Any
              ) -> tuple[Agent, FakeProvider, Recorder]:
    provider = FakeProvider(steps)
    recorder = Recorder()
    options.setdefault("memory", False)
    return Agent(workspace, provider, emit=recorder, **options), provider, recorder


def turn(agent: Agent, request: str = "Do the thing.") -> None:
    asyncio.run(agent.run_turn(request))


def notices(recorder: Recorder) -> list[Error]:
    return [e for e in recorder.of(Error) if e.kind == "rules_file"]


def age(path: Path, seconds: float = 60.0) -> None:
    """Make a file look old, so the stat cache trusts it (a fresh mtime is re-checked)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


# -- re-read before every call ---------------------------------------------------------------

def test_a_rules_edit_between_two_calls_reaches_the_second_request(tmp_path):
    rules = tmp_path / "CTXLAB.md"
    rules.write_text("Indent with tabs.\n", encoding="utf-8")

    def edit_then_call_a_tool(call: ModelCall) -> ModelReply:
        rules.write_text("Indent with four spaces.\n", encoding="utf-8")  # a hand edit
        return tool("glob", {"pattern": "*.md"})

    agent, provider, _ = agent_for(tmp_path, [edit_then_call_a_tool, text("Done.")])
    turn(agent)

    first, second = provider.mains()
    assert "Indent with tabs." in first.system and "four spaces" not in first.system
    assert "Indent with four spaces." in second.system and "tabs" not in second.system


def test_a_same_size_edit_in_the_same_clock_tick_is_still_seen(tmp_path):
    rules = tmp_path / "CTXLAB.md"
    rules.write_text("Rule A.\n", encoding="utf-8")
    agent, provider, _ = agent_for(tmp_path, [
        lambda call: (rules.write_text("Rule B.\n", encoding="utf-8"), tool("glob", {
            "pattern": "*"}))[1],
        text("Done.")])
    turn(agent)
    first, second = provider.mains()
    assert "Rule A." in first.system and "Rule B." in second.system


def test_an_unchanged_rules_file_is_not_read_again(tmp_path):
    rules_file = tmp_path / "CTXLAB.md"
    rules_file.write_text("Keep it short.\n", encoding="utf-8")
    age(rules_file)
    rules = ProjectRules(tmp_path)
    first = rules.sections()
    for _ in range(5):
        assert rules.sections() == first
    assert rules.reads == 1
    rules_file.write_text("Keep it shorter.\n", encoding="utf-8")
    assert "Keep it shorter." in rules.sections()[0].text
    assert rules.reads == 2
    rules_file.unlink()
    assert rules.sections() == []


def test_rules_reach_every_request_of_every_turn_and_never_the_messages(tmp_path):
    rule = "Never touch the vendor/ directory."
    (tmp_path / "CTXLAB.md").write_text(f"{rule}\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("lorem ipsum dolor sit amet\n" * 60, encoding="utf-8")
    steps: list[Step] = []
    for n in range(3):
        steps += [tool("read_file", {"path": "notes.txt"}, f"toolu_{n}"), text(f"Read {n}.")]
    agent, provider, recorder = agent_for(tmp_path, steps,
                                          thresholds=Thresholds(context_limit=1_500))
    for n in range(3):
        turn(agent, f"Read the notes, round {n}.")

    assert any(s.stage == "compact_history" for s in recorder.of(Stage))  # it was compacted
    assert len(provider.mains()) == 6
    for call in provider.calls:
        if call.purpose == "main":
            assert rule in call.system
        assert rule not in json.dumps(call.messages)  # main and summary calls alike
    assert rule not in json.dumps(agent.messages) + json.dumps(agent.full_history)


# -- order, categories, the event ----------------------------------------------------------------

def test_the_three_files_are_pinned_in_the_documented_order(tmp_path):
    assert RULES_FILES == ("CTXLAB.md", "AGENTS.md", "CLAUDE.md")
    for name in reversed(RULES_FILES):
        (tmp_path / name).write_text(f"rule from {name}\n", encoding="utf-8")
    agent, provider, recorder = agent_for(tmp_path, [text("ok")])
    turn(agent)
    system = provider.mains()[0].system
    positions = [system.index(f"rule from {name}") for name in RULES_FILES]
    assert positions == sorted(positions)
    (event,) = recorder.of(SystemPrompt)
    pinned = [s for s in event.sections if s["category"] == "pinned"]
    assert [s["name"] for s in pinned] == ["rules:CTXLAB.md", "rules:AGENTS.md",
                                           "rules:CLAUDE.md"]
    assert [s["source"] for s in pinned] == list(RULES_FILES)


def test_a_file_linked_under_two_names_is_pinned_once(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("shared rule\n", encoding="utf-8")
    (tmp_path / "AGENTS.md").symlink_to("CLAUDE.md")
    names = [s.name for s in ProjectRules(tmp_path).sections()]
    assert names == ["rules:AGENTS.md"]


def test_every_section_of_the_event_has_a_category(tmp_path):
    MemoryStore(tmp_path / ".memory").write("tabs", "The user indents with tabs", "user",
                                            "Always indent with tabs.")
    (tmp_path / "CTXLAB.md").write_text("Be brief.\n", encoding="utf-8")
    agent, _, recorder = agent_for(tmp_path, [tool("bash", {"command": "true"}), text("ok")],
                                   memory=True, offline_side_calls=True)
    turn(agent, "Indent the code with tabs.")
    event = recorder.of(SystemPrompt)[-1]
    by_name = {s["name"]: s["category"] for s in event.sections}
    assert by_name["identity"] == by_name["request_rules"] == by_name["tool_rules"] == "system"
    assert by_name["rules:CTXLAB.md"] == by_name["worklog"] == "pinned"
    memory = [name for name, category in by_name.items() if category == "memory"]
    assert memory and all("memory" in name.lower() for name in memory)
    assert set(by_name.values()) <= {"system", "memory", "pinned"}
    assert all(s["chars"] > 0 for s in event.sections)
    assert json.loads(json.dumps(event.to_json()))["sections"][0]["category"] == "system"


def test_pinned_off_leaves_rules_and_work_log_out(tmp_path):
    (tmp_path / "CTXLAB.md").write_text("Be brief.\n", encoding="utf-8")
    agent, provider, recorder = agent_for(
        tmp_path, [tool("bash", {"command": "true"}), text("ok")], pinned=False)
    turn(agent)
    turn(agent, "again")
    assert all("Be brief." not in c.system for c in provider.mains())
    names = {s["name"] for e in recorder.of(SystemPrompt) for s in e.sections}
    assert names == {"identity", "request_rules", "tool_rules"}
    assert agent.summary_notes() == ""
    assert agent.worklog.commands  # still recorded, only not shown


# -- bad rules files: a notice, never a crash -----------------------------------------------------

def test_a_huge_rules_file_is_truncated_with_a_marker_and_one_notice(tmp_path):
    rules = tmp_path / "CTXLAB.md"
    rules.write_text("x" * 49_999 + "\n", encoding="utf-8")
    agent, provider, recorder = agent_for(tmp_path, [tool("bash", {"command": "true"}),
                                                     text("ok")])
    turn(agent)

    first, second = provider.mains()
    marker = truncation_marker(RULES_CHAR_CAP, "50000")
    assert marker == "[truncated: 20000 of 50000 chars]"
    assert marker in first.system and marker in second.system
    section = next(s for s in agent.last_system if s.name == "rules:CTXLAB.md")
    assert section.text.count("x") == RULES_CHAR_CAP and section.chars <= RULES_SECTION_LIMIT
    (notice,) = notices(recorder)  # one notice for this version of the file, not one per call
    assert "CTXLAB.md" in notice.message and "20,000" in notice.message

    rules.write_text("short again\n", encoding="utf-8")
    turn(agent, "again")
    assert "short again" in provider.mains()[-1].system
    assert len(notices(recorder)) == 1


def test_a_rules_file_past_the_read_cap_is_cut_without_reading_it_all(tmp_path):
    (tmp_path / "AGENTS.md").write_bytes("é".encode() * 600_000)  # 1.2 MB, 2-byte chars
    rules = ProjectRules(tmp_path, Recorder())
    (section,) = rules.sections()
    assert section.chars <= RULES_SECTION_LIMIT
    assert "[truncated: 20000 of more than 500000 chars]" in section.text


@pytest.mark.parametrize(("name", "payload", "reason"), [
    ("CTXLAB.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8 text"),
    ("AGENTS.md", "café au lait".encode("latin-1"), "not UTF-8 text"),
])
def test_a_binary_or_non_utf8_rules_file_is_skipped_with_a_notice(tmp_path, name, payload,
                                                                  reason):
    (tmp_path / name).write_bytes(payload)
    (tmp_path / "CLAUDE.md").write_text("the good rules\n", encoding="utf-8")
    agent, provider, recorder = agent_for(tmp_path, [text("ok")])
    turn(agent)
    (notice,) = notices(recorder)
    assert name in notice.message and reason in notice.message
    system = provider.mains()[0].system
    assert "the good rules" in system and f"rules:{name}" not in json.dumps(
        [s.name for s in agent.last_system])


def test_an_unreadable_rules_path_is_a_notice(tmp_path):
    (tmp_path / "CLAUDE.md").mkdir()
    (tmp_path / "CTXLAB.md").symlink_to(tmp_path / "missing.md")  # dangling: just absent
    agent, provider, recorder = agent_for(tmp_path, [text("ok")])
    turn(agent)
    (notice,) = notices(recorder)
    assert "CLAUDE.md is not a regular file" in notice.message
    assert len(provider.mains()) == 1


def test_an_empty_rules_file_pins_nothing(tmp_path):
    (tmp_path / "CTXLAB.md").write_text("\ufeff\n  \n", encoding="utf-8")
    assert ProjectRules(tmp_path).sections() == []


# -- the budget ------------------------------------------------------------------------------------

def test_the_pinned_part_of_the_system_prompt_never_exceeds_its_budget(tmp_path):
    for name in RULES_FILES:
        (tmp_path / name).write_text(f"{name} " * 30_000, encoding="utf-8")
    steps: list[Step] = [ModelReply(content=[
        {"type": "tool_use", "id": f"toolu_{b}_{n}", "name": "bash",
         "input": {"command": f"echo {b}-{n}"}} for n in range(50)], stop_reason="tool_use")
        for b in range(3)]
    agent, provider, _ = agent_for(tmp_path, [*steps, text("ok")])
    for n in range(40):
        agent.worklog.note_request(f"request number {n} " * 20, n)
    turn(agent)

    budget = len(RULES_FILES) * RULES_SECTION_LIMIT + WORKLOG_BUDGET
    pinned = [s for s in agent.last_system if s.category == "pinned"]
    assert len(pinned) == 4 and sum(s.chars for s in pinned) <= budget
    worklog = next(s for s in pinned if s.name == "worklog")
    assert worklog.chars <= WORKLOG_BUDGET
    assert "earlier command" in worklog.text  # folded into counts, not dropped
    base = render([s for s in agent.last_system if s.category != "pinned"])
    separators = 2 * len(pinned)  # sections are joined by a blank line
    assert len(provider.mains()) == 4 and len(agent.worklog.commands) == 150
    for call in provider.mains():  # every request, as the work log grew
        assert len(call.system) <= len(base) + budget + separators
