"""What the session relied on (quotes, re-reads) and whether a strategy still showed it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.compact.managers import Manager
from core.compact.pointers import earlier_text
from core.sources.replay import load_recording
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.sources.replay.original import CLEARED, as_sent
from core.whatif.facts import DETAIL, Visibility, distinctive, find_facts

FIXTURES = Path(__file__).parents[2] / "fixtures" / "replay"
LINE = "def check_token(user, tokens) -> bool:  # the one the login test calls"
OTHER = "    return user.token in tokens.values()  # compares against every token"


def call(call_id: str, name: str, **given: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": given}


def reply(*blocks: dict[str, Any] | str) -> Message:
    return {"role": "assistant", "content": [
        {"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]}


def results(*pairs: tuple[str, str]) -> list[Message]:
    return [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": i, "content": c} for i, c in pairs]}]


def recording(*steps: Exchange | Compaction) -> Recording:
    return Recording(format="claude-code", path=Path("s.jsonl"), agent=Manager.CLAUDE_CODE,
                     steps=list(steps))


def ask(text: str) -> list[Message]:
    return [{"role": "user", "content": text}]


def auth_read() -> str:
    return f"     1\t{LINE}\n     2\t{OTHER}\n     3\t\n     4\tx = 1\n"


def quoting_session() -> Recording:
    """1: ask; reply reads auth.py.  2: the result; reply runs a test.  3: test output;
    reply quotes line 1 of auth.py."""
    return recording(
        Exchange(ask("fix the login"), reply(call("t1", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t1", auth_read())), reply(call("t2", "Bash", command="pytest"))),
        Exchange(results(("t2", "1 failed, 3 passed in 0.12s")),
                 reply(f"The culprit is `{LINE}`: it ignores expiry.")))


def test_a_quoted_line_is_a_fact_with_the_requests_that_made_and_needed_it():
    facts = find_facts(quoting_session())
    assert [(f.kind, f.result_id, f.tool, f.produced_at, f.needed_at, f.detail)
            for f in facts] == [("quote", "t1", "Read", 2, 3, LINE)]


def test_a_tool_calls_input_quoting_a_result_counts_once_per_request():
    edit = Exchange(results(("t2", "ok")), reply(call(
        "t3", "Edit", file_path="/w/auth.py", old_string=f"{LINE}\n{OTHER}",
        new_string="def check_token(user, tokens): ...")))
    facts = find_facts(recording(*quoting_session().steps[:2], edit))
    assert [(f.kind, f.needed_at, f.detail) for f in facts] == [("quote", 3, LINE)]


def test_short_and_trivial_lines_are_no_facts():
    assert distinctive("     7\tok") is None
    assert distinctive("-" * 60) is None  # long, but no words
    assert distinctive("| 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |") is None  # too few letters
    assert distinctive(f"    12\t{LINE}   ") == LINE  # the line number prefix is not quoted
    session = recording(
        Exchange(ask("run it"), reply(call("t1", "Bash", command="make"))),
        Exchange(results(("t1", "ok\nexit 0\n" + "=" * 40 + "\n")),
                 reply("ok", "exit 0", "=" * 40)))
    assert find_facts(session) == []


def test_a_line_the_agent_wrote_itself_is_not_the_results_fact():
    session = recording(
        Exchange(ask("write it"), reply(call("t1", "Write", file_path="/w/a.py", content=LINE))),
        Exchange(results(("t1", "File created")),
                 reply(call("t2", "Read", file_path="/w/a.py"))),
        Exchange(results(("t2", f"     1\t{LINE}\n")), reply(f"Done: {LINE}")))
    assert find_facts(session) == []


def test_a_long_quoted_line_is_cut_in_the_detail():
    long_line = "error: " + "the configuration value could not be parsed " * 6
    session = recording(
        Exchange(ask("build"), reply(call("t1", "Bash", command="make"))),
        Exchange(results(("t1", long_line)), reply(f"It says: {long_line.strip()}")))
    (fact,) = find_facts(session)
    assert len(fact.detail) == DETAIL and fact.detail.endswith("…")


def reread_session(second: str = "/w/auth.py", between: dict[str, Any] | None = None
                   ) -> Recording:
    """1: ask; reply reads auth.py.  2: result; reply maybe edits.  3: reply reads
    ``second``."""
    middle = between or call("t2", "Bash", command="pytest")
    return recording(
        Exchange(ask("fix"), reply(call("t1", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t1", auth_read())), reply(middle)),
        Exchange(results(("t2", "done")), reply(call("t3", "Read", file_path=second))),
        Exchange(results(("t3", auth_read())), reply("ok")))


def test_reading_the_same_file_again_is_a_reread_of_the_earlier_result():
    facts = find_facts(reread_session("/w/./sub/../auth.py"))  # the same path, normalised
    assert [(f.kind, f.result_id, f.produced_at, f.needed_at, f.detail) for f in facts] == \
        [("reread", "t1", 2, 3, "/w/auth.py")]


def test_reading_another_file_or_after_an_edit_is_no_reread():
    assert find_facts(reread_session("/w/views.py")) == []
    edit = call("t2", "Edit", file_path="/w/auth.py", old_string="x = 1", new_string="x = 2")
    assert find_facts(reread_session(between=edit)) == []


@pytest.mark.parametrize("command", [
    "sed -i 's/x = 1/x = 2/' /w/auth.py", "echo 'x = 2' >> auth.py", "cp /tmp/auth.py auth.py",
    "git checkout -- auth.py", "git apply fix.diff"])
def test_reading_again_after_a_shell_write_is_no_reread(command: str):
    assert find_facts(reread_session(between=call("t2", "Bash", command=command))) == []


def test_a_shell_command_that_only_looks_or_names_another_file_keeps_the_reread():
    for command in ("grep -n check_token /w/auth.py", "sed -i 's/a/b/' /w/views.py"):
        assert len(find_facts(reread_session(between=call("t2", "Bash", command=command)))) == 1


def capped_read_session(offset: int) -> Recording:
    """A whole Read that came back at Claude Code's 2,000-line cap, then a Read of 100
    lines from ``offset``."""
    head = "".join(f"{n:6}\tline {n}\n" for n in range(1, 2001))
    return recording(
        Exchange(ask("read"), reply(call("t1", "Read", file_path="/w/big.py"))),
        Exchange(results(("t1", head)),
                 reply(call("t2", "Read", file_path="/w/big.py", offset=offset, limit=100))),
        Exchange(results(("t2", "more")), reply("ok")))


def test_a_capped_whole_read_covers_only_the_lines_it_returned():
    assert find_facts(capped_read_session(2001)) == []  # past what came back: new content
    assert [f.result_id for f in find_facts(capped_read_session(1801))] == ["t1"]


def test_a_reread_points_at_the_last_result_that_held_the_content():
    unchanged = "Wasted call — file unchanged since your last Read. Refer to that earlier one."
    session = recording(
        Exchange(ask("fix"), reply(call("t1", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t1", auth_read())), reply(call("t2", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t2", unchanged)), reply(call("t3", "Read", file_path="/w/auth.py"))),
        Exchange([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3",
                                                "content": "EACCES", "is_error": True}]}],
                 reply(call("t4", "Read", file_path="/w/auth.py"))))
    assert [(f.result_id, f.needed_at) for f in find_facts(session)] == \
        [("t1", 2), ("t1", 3), ("t1", 4)]


def test_a_shell_read_of_a_file_read_before_is_a_reread():
    session = recording(
        Exchange(ask("look"), reply(call("c1", "exec_command", cmd="cat notes.txt",
                                         workdir="/w"))),
        Exchange(results(("c1", "alpha\nbeta\n")),
                 reply(call("c2", "shell", command=["bash", "-lc", "cat /w/notes.txt"]))),
        Exchange(results(("c2", "alpha\nbeta\n")),
                 reply(call("c3", "shell", command=["bash", "-lc", "sed -n '1,1p' /w/notes.txt"]))),
        Exchange(results(("c3", "alpha\n")),
                 reply(call("c4", "shell", command=["bash", "-lc", "cat notes.txt | wc -l"]))))
    assert [(f.result_id, f.needed_at, f.detail) for f in find_facts(session)] == \
        [("c1", 2, "/w/notes.txt"), ("c2", 3, "/w/notes.txt")]  # a pipe is no plain read


def test_a_result_sent_after_a_compaction_is_produced_by_the_next_request():
    session = recording(
        Exchange(ask("fix"), reply(call("t1", "Read", file_path="/w/auth.py"))),
        Compaction(by=Manager.CLAUDE_CODE, trigger="auto", input=results(("t1", auth_read())),
                   kept=ask("summary: reading auth.py")),
        Exchange(ask("go on"), reply(f"Line one is {LINE}")))
    (fact,) = find_facts(session)
    assert (fact.produced_at, fact.needed_at) == (2, 2)


def sent_at(session: Recording, index: int) -> list[Message]:
    return next(list(h.messages) for n, (_, h) in enumerate(as_sent(session), 1) if n == index)


def replaced(messages: list[Message], call_id: str, content: str) -> list[Message]:
    """``messages`` with one result's content swapped, as a strategy would (a new dict)."""
    out = []
    for m in messages:
        blocks = m.get("content")
        if isinstance(blocks, list) and any(b.get("tool_use_id") == call_id for b in blocks):
            m = {**m, "content": [{**b, "content": content} if b.get("tool_use_id") == call_id
                                  else b for b in blocks]}
        out.append(m)
    return out


def test_a_quote_is_visible_while_the_result_or_a_summary_holding_it_is_sent():
    session = quoting_session()
    visibility = Visibility(find_facts(session))
    sent = sent_at(session, 3)
    assert visibility.check(2, sent_at(session, 2)) == []  # nothing needed there
    assert [c.visible for c in visibility.check(3, sent)] == [True]
    masked = replaced(sent, "t1", earlier_text(".ctxlab/tool-results/t1.txt"))
    assert [c.visible for c in visibility.check(3, masked)] == [False]
    summary = [{"role": "user", "content": f"[Compacted] auth.py starts with {LINE} (kept)"},
               *masked[2:]]
    assert [c.visible for c in visibility.check(3, summary)] == [True]


def test_a_reread_is_visible_only_while_the_result_keeps_its_original_content():
    session = reread_session()
    visibility = Visibility(find_facts(session))
    sent = sent_at(session, 3)
    assert [c.visible for c in visibility.check(3, sent)] == [True]
    assert [c.visible for c in visibility.check(3, replaced(sent, "t1", CLEARED))] == [False]
    preview = replaced(sent, "t1", auth_read()[:40])  # cut: no longer the content
    assert [c.visible for c in visibility.check(3, preview)] == [False]
    assert [c.visible for c in visibility.check(3, sent)] == [True]  # the cache follows


def test_a_real_claude_code_session_has_rereads_in_range():
    session = load_recording(FIXTURES / "claude-code-2.1.197"
                             / "1292932d-83c2-464e-86ec-21d645a712d5.jsonl")
    facts = find_facts(session)
    requests = len(session.exchanges)
    assert facts and all(f.kind == "reread" and f.detail.endswith("/notes.txt") for f in facts)
    assert all(1 <= f.produced_at <= f.needed_at <= requests for f in facts)
    visibility = Visibility(facts)
    checks = [c for n, (_, h) in enumerate(as_sent(session), 1)
              for c in visibility.check(n, h.messages)]
    assert len(checks) == len(facts)
    assert not any(c.visible for c in checks)  # Claude Code's own compactions dropped them


def reused_id_session() -> Recording:
    """``t1`` answers a Read of auth.py, then (the harness reusing its ids) a test run,
    whose output the agent quotes; then auth.py is read again."""
    failure = "FAILED tests/test_login.py::test_expired_token - AssertionError"
    return recording(
        Exchange(ask("fix"), reply(call("t1", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t1", auth_read())), reply(call("t1", "Bash", command="pytest"))),
        Exchange(results(("t1", failure)),
                 reply(f"It says {failure}", call("t3", "Read", file_path="/w/auth.py"))),
        Exchange(results(("t3", auth_read())), reply("ok")))


def test_a_reused_id_is_another_result_with_facts_of_its_own():
    facts = find_facts(reused_id_session())
    assert [(f.kind, f.result_id, f.tool, f.produced_at, f.needed_at) for f in facts] == \
        [("quote", "t1", "Bash", 3, 3), ("reread", "t1", "Read", 2, 3)]


def test_a_fact_is_judged_on_its_own_result_not_a_later_one_reusing_the_id():
    session = reused_id_session()
    visibility = Visibility(find_facts(session))
    sent = sent_at(session, 3)  # both t1 results: the Read's first, the test run's last
    assert [c.visible for c in visibility.check(3, sent)] == [True, True]
    read_gone = [m for m in sent if m != results(("t1", auth_read()))[0]]  # Read's dropped
    assert [(c.fact.kind, c.visible) for c in visibility.check(3, read_gone)] == \
        [("quote", True), ("reread", False)]
