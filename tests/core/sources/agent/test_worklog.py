"""The work log (core/sources/agent/worklog.py): recorded by the harness from tool results,
pinned in every system prompt, handed to every summary, saved beside the session — and
bounded: past its budget the oldest entries fold into counts, never silently dropped.

Survival is shown end to end: through ``compact_history`` (a tiny context limit),
``reactive_compact`` (a prompt-too-long error), and ``--resume`` (the AgentSession, and the real
command line against the scripted Messages server).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.compact.summarizer import (
    HISTORY_LABEL,
    NOTES_LABEL,
    NotedSummarizer,
    OfflineSummarizer,
)
from core.config import Thresholds
from core.events import Error, Recorder, Stage
from core.providers.base import AuthError, ContextOverflow, ModelReply
from core.sources.agent.session import AgentSession, RunOptions
from core.sources.agent.worklog import (
    MAX_STORED,
    REQUEST_CHARS,
    WORKLOG_BUDGET,
    WorkLog,
    WorkLogError,
    load_worklog,
    save_worklog,
    worklog_path,
)
from core.tools.outcome import ToolOutcome
from tests.core.sources.agent.test_pinned import FakeProvider, agent_for, text, tool, turn
from tui.cli import main

KINDS = ("requests", "files", "commands")


def wrote(path: str) -> ToolOutcome:
    return ToolOutcome(f"Wrote 3 bytes to {path}", meta={"path": path, "bytes": 3})


def ran(code: int | None, timed_out: bool = False) -> ToolOutcome:
    return ToolOutcome("out", is_error=timed_out, meta={"exit_code": code,
                                                        "timed_out": timed_out})


def totals(log: WorkLog) -> dict[str, int]:
    return {"requests": len(log.requests) + log.folded["requests"],
            "files": len(log.files) + log.folded["files"],
            "commands": len(log.commands) + log.folded["commands"]}


# -- what is recorded ----------------------------------------------------------------------------

def test_only_what_a_tool_result_proves_is_recorded():
    log = WorkLog()
    log.note_request("Fix   the\nbuild " + "x" * 500, 1)
    log.note_tool("write_file", {"path": "a.py"}, wrote("a.py"), 1)
    log.note_tool("edit_file", {"path": "a.py"}, ToolOutcome("Edited a.py", meta={"path": "a.py"}),
                  2)
    log.note_tool("write_file", {"path": ".ctxlab/x"}, ToolOutcome(
        "Error: refused", is_error=True, meta={"error": "protected"}), 2)
    log.note_tool("edit_file", {"path": "b.py"}, ToolOutcome(
        "Error: not found", is_error=True, meta={"error": "not_found", "path": "b.py"}), 2)
    log.note_tool("read_file", {"path": "c.py"}, ToolOutcome("text", meta={"path": "c.py"}), 2)
    log.note_tool("bash", {"command": "pytest -q"}, ran(1), 2)
    log.note_tool("bash", {"command": "sleep 999"}, ran(None, timed_out=True), 2)
    log.note_tool("bash", {}, ToolOutcome("Error: bad", is_error=True,
                                          meta={"error": "bad_input"}), 2)

    (request,) = log.requests
    assert request.text.startswith("Fix the build x") and len(request.text) == REQUEST_CHARS
    (entry,) = log.files
    assert (entry.path, entry.writes, entry.edits, entry.first_turn, entry.last_turn) == (
        "a.py", 1, 1, 1, 2)
    assert [(c.command, c.exit_code, c.timed_out, c.ok) for c in log.commands] == [
        ("pytest -q", 1, False, False), ("sleep 999", None, True, False)]
    rendered = log.render().text
    assert "- a.py: written, edited (turns 1–2)" in rendered
    assert "- turn 2, exit 1: pytest -q" in rendered
    assert "- turn 2, timed out: sleep 999" in rendered


def test_the_agent_records_real_tool_results(tmp_path):
    agent, _, _ = agent_for(tmp_path, [
        batch(("write_file", {"path": "src/app.py", "content": "x = 1\n"}),
              ("edit_file", {"path": "src/app.py", "old_text": "1", "new_text": "2"}),
              ("write_file", {"path": ".memory/hack.md", "content": "no"}),
              ("bash", {"command": "exit 3"}),
              ("read_file", {"path": "src/app.py"})),
        text("Done.")])
    turn(agent, "Create src/app.py")
    assert [(f.path, f.writes, f.edits) for f in agent.worklog.files] == [("src/app.py", 1, 1)]
    assert [(c.command, c.exit_code) for c in agent.worklog.commands] == [("exit 3", 3)]
    assert [r.text for r in agent.worklog.requests] == ["Create src/app.py"]


def batch(*uses: tuple[str, dict[str, Any]]) -> ModelReply:
    """One model reply calling several tools at once."""
    return ModelReply(content=[{"type": "tool_use", "id": f"toolu_b{n}", "name": name,
                                "input": data} for n, (name, data) in enumerate(uses)],
                      stop_reason="tool_use")


def test_a_log_with_nothing_but_the_current_request_stays_out_of_the_prompt(tmp_path):
    log = WorkLog()
    log.note_request("hello", 1)
    assert log.section_text() == ""  # the request is in the messages already
    log.note_request("and again", 2)
    assert "- turn 1: hello" in log.section_text()


# -- bounded: folded, never dropped ------------------------------------------------------------

entries = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.text(min_size=1, max_size=300)),
        st.tuples(st.just("write"), st.from_regex(r"[a-z]{1,12}(/[a-z_]{1,40}){0,6}\.py",
                                                  fullmatch=True)),
        st.tuples(st.just("edit"), st.sampled_from(["a.py", "b/c.py", "README.md"])),
        st.tuples(st.just("bash"), st.tuples(st.text(min_size=1, max_size=250),
                                             st.sampled_from([0, 0, 0, 1, 2, None])))),
    max_size=400)


def build(items: list[tuple[str, Any]]) -> WorkLog:
    log = WorkLog()
    for n, (kind, value) in enumerate(items):
        if kind == "request":
            log.note_request(value, n)
        elif kind in ("write", "edit"):
            log.note_tool(f"{kind}_file", {"path": value}, wrote(value), n)
        else:
            command, code = value
            log.note_tool("bash", {"command": command}, ran(code, code is None), n)
    return log


@settings(max_examples=150, deadline=None)
@given(items=entries, budget=st.integers(min_value=900, max_value=12_000))
def test_the_work_log_never_exceeds_its_budget_and_never_drops_silently(items, budget):
    log = build(items)
    rendered = log.render(budget)
    assert len(rendered.text) <= budget
    assert not rendered.cut  # counts always fit a budget this size: nothing was cut
    for kind in KINDS:
        assert rendered.shown[kind] + rendered.folded[kind] == totals(log)[kind]
    text_ = rendered.text
    assert ("earlier command" in text_) == (rendered.folded["commands"] > 0)
    assert ("earlier file" in text_) == (rendered.folded["files"] > 0)
    assert ("more request" in text_) == (rendered.folded["requests"] > 0)
    if log.requests and rendered.shown["requests"]:
        assert f"- turn {log.requests[0].turn}: " in text_  # the task itself is folded last
    if rendered.folded["commands"]:
        ok = sum(c.ok for c in log.commands[:rendered.folded["commands"]])
        assert f"({ok} ok, {rendered.folded['commands'] - ok} failed)" in text_


@settings(max_examples=60, deadline=None)
@given(items=entries, budget=st.integers(min_value=0, max_value=900))
def test_even_a_tiny_budget_is_respected_and_a_cut_is_marked(items, budget):
    rendered = build(items).render(budget)
    assert len(rendered.text) <= budget
    if rendered.cut and budget > 40:
        assert rendered.text.endswith(f"[work log cut to {budget} chars]")


def test_the_default_section_stays_within_the_documented_budget():
    log = WorkLog()
    for n in range(3_000):
        log.note_request(f"request {n} " * 30, n)
        log.note_tool("write_file", {}, wrote(f"pkg/module_{n:05d}/" + "deep/" * 30 + "x.py"), n)
        log.note_tool("bash", {"command": f"make test-{n} " * 20}, ran(n % 7), n)
    assert WORKLOG_BUDGET == 4_000
    text_ = log.section_text()
    assert len(text_) <= WORKLOG_BUDGET
    # storage is bounded too, and what left it is counted
    assert len(log.commands) == len(log.files) == len(log.requests) == MAX_STORED
    assert totals(log) == {"requests": 3_000, "files": 3_000, "commands": 3_000}
    assert log.requests[0].turn == 0  # the first request is kept
    assert "earlier commands (" in text_ and "earlier files (" in text_
    rendered = log.render()
    assert sum(rendered.shown.values()) + sum(rendered.folded.values()) == 9_000


# -- on disk ---------------------------------------------------------------------------------

def test_save_and_load_round_trip_atomically(tmp_path):
    log = build([("request", "go"), ("write", "a.py"), ("bash", ("ls", 0)),
                 ("bash", ("false", 1))])
    log.folded.update({"commands": 2, "commands_ok": 1, "commands_failed": 1})
    path = save_worklog(tmp_path, "s1", log)
    assert path == tmp_path / ".ctxlab" / "sessions" / "s1" / "worklog.json"
    assert [p.name for p in path.parent.iterdir()] == ["worklog.json"]  # no temp file left
    again = load_worklog(tmp_path, "s1")
    assert again.to_json() == log.to_json()
    assert again.render().text == log.render().text
    assert load_worklog(tmp_path, "never-saved").to_json() == WorkLog().to_json()


@pytest.mark.parametrize("content", ["{not json", '{"version": 1, "files": 3}', "[]",
                                     '{"version": 9}'])
def test_a_broken_saved_log_is_a_clear_error(tmp_path, content):
    path = worklog_path(tmp_path, "bad")
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WorkLogError, match=r"worklog\.json"):
        load_worklog(tmp_path, "bad")


# -- the summarizer is given it ------------------------------------------------------------------

def test_summarizers_get_the_notes_and_nothing_changes_without_them():
    calls: list[tuple[str, ...]] = []

    class Plain:  # a third-party summarizer: the three-argument protocol only
        async def summarize(self, messages: list[dict], active_request: str,
                            prepared_input: str) -> str:
            calls.append((prepared_input,))
            return "s"

    notes = "Files changed:\n- app/a.py: written (turn 1)"
    asyncio.run(NotedSummarizer(Plain(), lambda: notes).summarize([], "go", "[]"))
    asyncio.run(NotedSummarizer(Plain(), lambda: "").summarize([], "go", "[]"))
    assert calls == [(f"{NOTES_LABEL}\n{notes}\n\n{HISTORY_LABEL}\n[]",), ("[]",)]

    offline = asyncio.run(NotedSummarizer(OfflineSummarizer(), lambda: notes).summarize(
        [{"role": "user", "content": "go"}], "go", "[]"))
    assert offline.endswith(f"{NOTES_LABEL}\n{notes}")


# -- it survives every compaction ----------------------------------------------------------------

def test_the_work_log_survives_compact_history(tmp_path):
    (tmp_path / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 80, encoding="utf-8")
    agent, provider, recorder = agent_for(
        tmp_path,
        [tool("write_file", {"path": "app/mod_01.py", "content": "# migrated\n"}, "toolu_w"),
         tool("read_file", {"path": "big.txt"}, "toolu_r"),
         tool("read_file", {"path": "big.txt"}, "toolu_r2"), text("Done."),
         text("Next.")],
        thresholds=Thresholds(context_limit=1_200))
    turn(agent, "Migrate mod_01.")
    turn(agent, "What next?")

    assert any(s.stage == "compact_history" for s in recorder.of(Stage))
    assert "toolu_w" not in json.dumps(agent.messages)  # the write itself was compacted away
    summary_calls = [c for c in provider.calls if c.purpose == "summary"]
    assert summary_calls
    for call in summary_calls:  # the summarizer saw the harness's record
        content = call.messages[0]["content"]
        assert content.startswith(NOTES_LABEL) and "- app/mod_01.py: written (turn 1)" in content
    last = provider.mains()[-1]
    assert "- app/mod_01.py: written (turn 1)" in last.system
    assert "app/mod_01.py" not in json.dumps(last.messages).replace("SUMMARY", "")


def test_the_work_log_survives_reactive_compact(tmp_path):
    agent, provider, recorder = agent_for(tmp_path, [
        tool("bash", {"command": "echo built > out.txt"}, "toolu_b"),
        tool("write_file", {"path": "app/x.py", "content": "x = 1\n"}, "toolu_w"),
        ContextOverflow("prompt is too long: 212000 tokens > 200000 maximum", status=400),
        text("Recovered.")])
    turn(agent, "Build, then write app/x.py.")

    (stage,) = [s for s in recorder.of(Stage)]
    assert stage.stage == "reactive_compact"
    (summary,) = [c for c in provider.calls if c.purpose == "summary"]
    assert "app/x.py: written" in summary.messages[0]["content"]
    assert "exit 0: echo built > out.txt" in summary.messages[0]["content"]
    refused, retried = provider.mains()[-2:]
    assert "- app/x.py: written (turn 1)" in retried.system
    assert "- turn 1, exit 0: echo built > out.txt" in retried.system
    assert len(retried.messages) < len(refused.messages)


def run_prompts(workspace: Path, provider: FakeProvider, prompts: list[str],
                **options: Any) -> tuple[bool, Recorder]:
    recorder = Recorder()
    opts = RunOptions(workspace=workspace, prompts=prompts, provider="fake", memory=False,
                      **options)
    return asyncio.run(AgentSession(opts, recorder, provider=provider).run()), recorder


def test_the_work_log_survives_a_resumed_session(tmp_path):
    first = FakeProvider([tool("write_file", {"path": "app/a.py", "content": "a\n"}),
                          text("Wrote it.")])
    ok, _ = run_prompts(tmp_path, first, ["Write app/a.py"], session="s1")
    assert ok
    saved = json.loads(worklog_path(tmp_path, "s1").read_text(encoding="utf-8"))
    assert saved["files"][0]["path"] == "app/a.py"

    second = FakeProvider([text("You wrote app/a.py.")])
    ok, _ = run_prompts(tmp_path, second, ["What did you write?"], resume="s1")
    assert ok
    (call,) = second.mains()
    assert "- app/a.py: written (turn 1)" in call.system
    assert "- turn 2: What did you write?" in call.system
    assert ".ctxlab/sessions/s1/worklog.json" in call.system
    again = load_worklog(tmp_path, "s1")
    assert [r.text for r in again.requests] == ["Write app/a.py", "What did you write?"]


def test_a_run_without_a_session_name_still_keeps_its_log(tmp_path):
    ok, _ = run_prompts(tmp_path, FakeProvider([tool("bash", {"command": "true"}),
                                                text("ok")]), ["go"])
    assert ok
    log = load_worklog(tmp_path, "default")
    assert [(c.command, c.exit_code) for c in log.commands] == [("true", 0)]


def test_a_failed_run_keeps_what_its_tools_did(tmp_path):
    provider = FakeProvider([tool("write_file", {"path": "half.py", "content": "1\n"}),
                             AuthError("invalid x-api-key", status=401)])
    ok, _ = run_prompts(tmp_path, provider, ["Write half.py"], session="s1")
    assert not ok
    assert [f.path for f in load_worklog(tmp_path, "s1").files] == ["half.py"]


def test_an_unreadable_saved_log_is_set_aside_with_a_notice(tmp_path):
    run_prompts(tmp_path, FakeProvider([text("hi")]), ["hello"], session="s1")
    path = worklog_path(tmp_path, "s1")
    path.write_text("{broken", encoding="utf-8")
    ok, recorder = run_prompts(tmp_path, FakeProvider([text("hi again")]), ["again"],
                               resume="s1")
    assert ok
    (notice,) = [e for e in recorder.of(Error) if e.kind == "worklog_file"]
    assert "worklog.json" in notice.message and "worklog.json.bad" in notice.message
    assert path.with_name("worklog.json.bad").read_text(encoding="utf-8") == "{broken"
    assert [r.text for r in load_worklog(tmp_path, "s1").requests] == ["again"]


# -- through the command line --------------------------------------------------------------------

def test_resume_on_the_command_line_brings_the_work_log_back(tmp_path, server_env, capsys):
    server = server_env
    server.reply_tool_use("write_file", {"path": "notes/todo.md", "content": "- ship\n"},
                          id="toolu_w")
    server.reply_text("Wrote notes/todo.md.")
    server.reply_text("[]")  # extract
    args = ["run", "--headless", "--provider", "anthropic", "--json", "--workspace",
            str(tmp_path)]
    assert main([*args, "--prompt", "Write the todo list", "--session", "work"]) == 0

    before = len(server.requests_to())
    server.reply_text("You wrote notes/todo.md.")
    server.reply_text("[]")
    assert main([*args, "--prompt", "What did you write?", "--resume", "work"]) == 0
    out = capsys.readouterr().out
    resumed = server.requests_to()[before].plain
    assert "- notes/todo.md: written (turn 1)" in resumed["system"]
    assert "notes/todo.md" not in json.dumps(resumed["messages"][-1])
    prompts = [json.loads(line) for line in out.splitlines()
               if json.loads(line)["type"] == "system_prompt"]
    assert {"name": "worklog", "category": "pinned",
            "source": ".ctxlab/sessions/work/worklog.json"}.items() <= {
        **prompts[-1]["sections"][-1]}.items()
