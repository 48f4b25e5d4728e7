"""A scripted client compacts its own history; the watch sees it and says what went missing.

The client is a real agent loop on the SDK, through the proxy, against the scripted server:
it micro-compacts old tool results to Claude Code's placeholder, then replaces its past with
a summary. Dropping messages outright, and the diff's invariants, are checked on the pure
functions.
"""

from __future__ import annotations

from typing import Any

import anthropic
from hypothesis import given
from hypothesis import strategies as st

from core.events import Stage, WatchRequest, WatchResponse
from core.sources.watch.conversations import Conversations, diff_requests

SYSTEM = "You are a careful coding agent."
TOOLS = [{"name": "read_file", "description": "Read a file.",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
PLACEHOLDER = "[Old tool result content cleared]"
SUMMARY = ("This session is being continued from a previous conversation that ran out of "
           "context. The conversation is summarized below: the user asked to read a.py-c.py.")


def call(client: anthropic.Anthropic, history: list[dict[str, Any]]) -> Any:
    reply = client.messages.create(model="claude-test", max_tokens=256, system=SYSTEM,
                                   tools=TOOLS, messages=history)
    history.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
    return reply


def answer_tools(history: list[dict[str, Any]], reply: Any) -> None:
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": "line\n" * 400}
               for b in reply.content if b.type == "tool_use"]
    history.append({"role": "user", "content": results})


def test_placeholders_and_a_summary_are_client_stages(watch, messages_server):
    for name in ("a.py", "b.py", "c.py", "d.py"):
        messages_server.reply_tool_use("read_file", {"path": name}, text=f"Reading {name}.")
    messages_server.reply_text("Done.")
    messages_server.reply_text("Still here.")
    messages_server.reply_text("And now.")
    client = anthropic.Anthropic(base_url=watch.url, api_key="k")
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read the files."}]
    for _ in range(3):  # requests 1-3: plain appends
        answer_tools(history, call(client, history))
    old_ids = [history[2]["content"][0]["tool_use_id"], history[4]["content"][0]["tool_use_id"]]
    for i in (2, 4):  # micro-compaction: the two oldest results become a placeholder
        history[i] = {"role": "user", "content": [
            {**history[i]["content"][0], "content": PLACEHOLDER}]}
    answer_tools(history, call(client, history))  # request 4
    # a summary replaces everything but the last exchange (request 5)
    history[:] = [{"role": "user", "content": SUMMARY}, *history[-2:]]
    call(client, history)
    history.append({"role": "user", "content": "Anything else?"})
    call(client, history)  # request 6: a plain append again
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 6)

    requests = watch.of(WatchRequest)
    assert len({r.conversation for r in requests}) == 1, "a summary continues its conversation"
    assert [r.appended for r in requests] == [1, 2, 2, 2, 2, 2]
    assert [r.purpose for r in requests] == ["main"] * 6
    stages = watch.of(Stage)
    assert [s.stage for s in stages] == ["client_micro_compact", "client_summary"]
    assert all(s.by == "client" for s in stages)
    micro, summary = stages
    assert sorted(micro.tool_use_ids) == sorted(old_ids)
    assert micro.after_chars < micro.before_chars
    assert {e["placeholder"] for e in micro.ledger} == {PLACEHOLDER}
    assert all(e["chars"] > 2000 and e["where"] == "request 3" for e in micro.ledger)
    assert requests[3].rewritten == 2 and requests[3].removed == 0
    assert summary.before_messages == 7 and summary.after_messages == 1
    assert requests[4].removed == 7
    assert any(e.get("summary", "").startswith("This session is being continued")
               for e in summary.ledger)
    removed = [e for e in summary.ledger if "message_index" in e]
    assert [e["message_index"] for e in removed] == [0, 1, 2, 3, 4, 5, 6]
    assert removed[0]["preview"] == "Read the files."


def test_truncation_without_a_summary():
    prev = [{"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "second answer"}]
    cur = [*prev[2:], {"role": "user", "content": "third question"}]
    appended, removed, rewritten, stages = diff_requests(prev, cur, from_request=1)
    assert (appended, removed, rewritten) == (1, 2, 0)
    (stage,) = stages
    assert stage.stage == "client_truncate" and stage.by == "client"
    assert [e["preview"] for e in stage.ledger] == ["first question", "first answer"]
    assert (stage.before_messages, stage.after_messages) == (4, 2)


def test_a_moving_cache_control_marker_is_no_change():
    first = {"role": "user", "content": [{"type": "text", "text": "hi",
                                          "cache_control": {"type": "ephemeral"}}]}
    prev = [first]
    cur = [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
           {"role": "assistant", "content": "hello"},
           {"role": "user", "content": [{"type": "text", "text": "more",
                                         "cache_control": {"type": "ephemeral"}}]}]
    assert diff_requests(prev, cur, from_request=1) == (2, 0, 0, ())


def test_a_different_system_prompt_is_a_different_conversation():
    tracker = Conversations()
    one = tracker.observe(1, {"system": "A", "messages": [{"role": "user", "content": "x"}]})
    two = tracker.observe(2, {"system": "B", "messages": [{"role": "user", "content": "x"}]})
    three = tracker.observe(3, {"system": "A", "messages": [{"role": "user", "content": "x"},
                                                            {"role": "assistant", "content": "y"},
                                                            {"role": "user", "content": "z"}]})
    assert one.conversation != two.conversation
    assert three.conversation == one.conversation and three.appended == 2


messages_st = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                           "content": st.text(max_size=30)}),
    max_size=12)


@given(messages_st, messages_st)
def test_pure_appends_never_make_a_stage(prev, tail):
    appended, removed, rewritten, stages = diff_requests(prev, prev + tail, from_request=1)
    assert (appended, removed, rewritten, stages) == (len(tail), 0, 0, ())


@given(messages_st, st.integers(min_value=1, max_value=12))
def test_dropping_from_the_front_is_seen_as_removal(prev, cut):
    unique = [{**m, "content": f"{i}:{m['content']}"} for i, m in enumerate(prev)]
    if cut > len(unique):
        return
    _, removed, _, stages = diff_requests(unique, unique[cut:], from_request=1)
    assert removed == cut
    assert [s.stage for s in stages] == ["client_truncate"]


def test_a_result_that_grew_is_rewritten_not_compacted():
    def history(result: str) -> list[dict]:
        return [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                   "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": result}]}]

    assert diff_requests(history("short"), history("a much longer result"),
                         from_request=1) == (0, 0, 1, ())
    _, _, rewritten, stages = diff_requests(history("a much longer result"), history("short"),
                                            from_request=1)
    assert rewritten == 1 and [s.stage for s in stages] == ["client_micro_compact"]
