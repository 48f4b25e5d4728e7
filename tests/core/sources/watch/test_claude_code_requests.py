"""The watch on Claude Code's own request shapes: which conversation, which purpose, which
compaction — built from what the CLI 2.1.197 sent (claude_code_shapes.py beside this)."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from core.compact.breakdown import MESSAGE_CATEGORIES
from core.events import WatchRequest, WatchResponse
from core.measure import json_chars
from core.sources.watch.analysis import analyse_request, guess_purpose
from core.sources.watch.conversations import Conversations, diff_requests
from core.sources.watch.identity import is_summary_request, session_of, stable_system_text
from tests.core.sources.watch import claude_code_shapes as cc

PATH = "/v1/messages"


def three_turns() -> list[list[dict[str, Any]]]:
    """The histories of the first run's three requests (parallel tools, then one more)."""
    one = [cc.user(cc.REMINDER, "Read notes.txt and count the lines of other.txt", cached=True),
           cc.system_message(cc.AGENTS)]
    two = cc.first_turns()
    three = [*cc.first_turns()[:-1], cc.results(cached=False),
             {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_03bash",
                                                "name": "Bash", "input": {"command": "echo"}}]},
             {"role": "user", "content": [{"tool_use_id": "toolu_03bash", "type": "tool_result",
                                           "content": "counted", "cache_control": cc.CC}]}]
    return [one, two, three]


def test_the_billing_block_and_the_session_are_read_as_claude_code_sends_them():
    first = cc.body("5f6", [cc.user("hi")])
    later = cc.body("f9d", [cc.user(cc.SUMMARY)])
    assert stable_system_text(first) == stable_system_text(later)
    assert "billing" not in stable_system_text(first)
    assert stable_system_text({"system": "x-anthropic-billing-header: a;\nYou help."}) == \
        "You help."
    assert session_of(first) == cc.SESSION  # from metadata.user_id's JSON
    assert session_of(first, "from-the-header") == "from-the-header"
    assert session_of({"metadata": {"user_id": "user_abc"}}) is None  # not JSON: no session
    assert session_of({"metadata": {"user_id": '{"session_id": 5}'}}) is None
    assert session_of({"metadata": "x"}, "s" * 500) is None  # no id is that long


def test_an_automatic_compaction_is_one_client_summary_on_the_request_after_the_summary():
    tracker = Conversations()
    ones = [tracker.observe(n, cc.body("5f6", h), cc.SESSION)
            for n, h in enumerate(three_turns(), start=1)]
    asked = cc.body("5f6", cc.summary_request(three_turns()[-1]))
    assert guess_purpose(PATH, asked) == "summary" and is_summary_request(asked)
    summary_call = tracker.observe(4, asked, cc.SESSION)
    after = tracker.observe(5, cc.body("f9d", cc.continued("Now say what the first line was")),
                            cc.SESSION)

    conversation = ones[0].conversation
    assert {c.conversation for c in (*ones, summary_call, after)} == {conversation}
    assert [c.stages for c in (*ones, summary_call)] == [()] * 4
    assert (summary_call.appended, summary_call.removed, summary_call.rewritten) == (0, 0, 0)
    (stage,) = after.stages
    before = three_turns()[-1]
    assert stage.stage == "client_summary" and stage.by == "client"
    assert (stage.before_messages, stage.after_messages) == (len(before), 1)
    assert stage.before_chars == json_chars(before)
    gone = [e for e in stage.ledger if "message_index" in e]
    assert len(gone) == len(before)
    assert {e["where"] for e in gone} == {"request 3"}  # not 4: the summary call
    assert {e["conversation"] for e in stage.ledger} == {conversation}
    assert any(e.get("summary", "").startswith("This session is being continued")
               for e in stage.ledger)
    assert after.removed == len(before) and after.appended == 2


def test_compact_keeps_the_same_summary_yet_is_a_summary_not_a_truncation():
    tracker = Conversations()
    history = cc.continued("Now say what the first line was")
    history = [*history, cc.assistant_tools(), cc.results()]
    tracker.observe(6, cc.body("f9d", history), cc.SESSION)
    tracker.observe(7, cc.body("f9d", cc.summary_request(history)), cc.SESSION)
    after = tracker.observe(8, cc.body("f9d", cc.after_compact_command("And the last line?")),
                            cc.SESSION)
    (stage,) = after.stages
    assert stage.stage == "client_summary"
    assert (stage.before_messages, stage.after_messages) == (len(history), 2)
    assert {e["where"] for e in stage.ledger if "message_index" in e} == {"request 6"}
    # without the summary request in between, the same shrink reads as a truncation
    _, _, _, (plain,) = diff_requests(history, cc.after_compact_command("And the last line?"),
                                      from_request=6)
    assert plain.stage == "client_truncate"


def test_a_summary_request_never_becomes_the_previous_request():
    tracker = Conversations()
    one, two, three = three_turns()
    for n, history in enumerate((one, two), start=1):
        tracker.observe(n, cc.body("5f6", history), cc.SESSION)
    tracker.observe(3, cc.body("5f6", cc.summary_request(two)), cc.SESSION)
    next_turn = tracker.observe(4, cc.body("5f6", three), cc.SESSION)
    assert (next_turn.appended, next_turn.removed, next_turn.rewritten) == (2, 0, 0)
    assert next_turn.stages == ()


def test_a_subagent_in_the_same_session_is_its_own_conversation():
    tracker = Conversations()
    main = tracker.observe(1, cc.body("931", cc.first_turns()[:2]), cc.SESSION)
    task = [cc.user(cc.REMINDER, "SUBAGENT-TASK: count the lines of notes.txt", cached=True),
            cc.system_message(cc.SKILLS)]
    sub = tracker.observe(2, cc.body("a39", task, prompt=cc.SUBAGENT_PROMPT), cc.SESSION,
                          cc.AGENT)
    other = [cc.user(cc.REMINDER, "SUBAGENT-TASK: list the files", cached=True),
             cc.system_message(cc.SKILLS)]
    # a second subagent of the same type, from a client that names no agent
    sibling = tracker.observe(3, cc.body("b77", other, prompt=cc.SUBAGENT_PROMPT), cc.SESSION)
    back = tracker.observe(4, cc.body("931", cc.first_turns()), cc.SESSION)
    assert len({main.conversation, sub.conversation, sibling.conversation}) == 3
    assert back.conversation == main.conversation and back.appended == 2
    assert sibling.stages == () and sibling.appended == 2


def test_cache_markers_and_string_or_block_content_are_no_change():
    tracker = Conversations()
    prompt = "Now say what the first line was"
    sent_first = [cc.user(cc.REMINDER, prompt, cached=True)]  # the newest prompt: a block
    sent_next = [{"role": "user", "content": [{"type": "text", "text": cc.REMINDER}]},
                 {"role": "user", "content": prompt}]  # one call later: a string
    tracker.observe(1, cc.body("f9d", [cc.user(cc.REMINDER), cc.user(prompt, cached=True)]),
                    cc.SESSION)
    same = tracker.observe(2, cc.body("f9d", [*sent_next, cc.assistant_tools(), cc.results()]),
                           cc.SESSION)
    assert (same.appended, same.removed, same.rewritten, same.stages) == (2, 0, 0, ())
    assert diff_requests(sent_first, [*sent_first, cc.assistant_tools()],
                         from_request=1) == (1, 0, 0, ())
    result_as_blocks = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "ok"}]}]}
    result_as_string = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "ok", "cache_control": cc.CC}]}
    assert diff_requests([result_as_blocks], [result_as_string], from_request=1) == \
        (0, 0, 0, ())


def test_system_messages_in_the_history_are_counted_as_system_messages_not_text():
    request = cc.body("5f6", cc.first_turns())
    facts = analyse_request(PATH, request)
    assert facts.breakdown["system_messages"] == json_chars(cc.AGENTS)
    assert sum(facts.breakdown[k] for k in MESSAGE_CATEGORIES) == facts.chars
    without = analyse_request(PATH, cc.body("5f6", [m for m in cc.first_turns()
                                                    if m["role"] != "system"]))
    assert facts.breakdown["text"] == without.breakdown["text"]
    legacy = facts.categories
    assert sum(legacy[k] for k in ("messages", "tool calls", "tool results", "thinking",
                                   "images")) == facts.chars


def test_the_proxy_hands_the_session_and_agent_headers_to_the_measuring(watch,
                                                                        messages_server):
    """Through the proxy and its measuring process: the same body from two sessions, and
    from a subagent of one, is three conversations; nothing of the ids is recorded."""
    bodies = {"model": "claude-opus-4-8", "max_tokens": 64, "system": "You help.",
              "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(3):
        messages_server.reply_text("hello")
    for session, agent in (("s-one", None), ("s-two", None), ("s-one", "a-sub")):
        headers = {"x-claude-code-session-id": session,
                   **({"x-claude-code-agent-id": agent} if agent else {})}
        client = anthropic.Anthropic(base_url=watch.url, api_key="k", default_headers=headers)
        client.messages.create(**bodies)
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 3)
    conversations = [r.conversation for r in watch.of(WatchRequest)]
    assert len(set(conversations)) == 3
    assert watch.source is not None and watch.source.recording is not None
    text = watch.source.recording.path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["conversation"] for line in lines] == conversations
    assert "s-one" not in text and "a-sub" not in text


def test_a_resumed_run_that_rewrites_the_system_prompt_stays_in_its_conversation():
    """Claude Code's first run describes the model as "Opus 4.8 (1M context)", a resumed run
    of the same session as "Opus 4.8": a named session is known by its id, not its prompt,
    so the summary call and the compaction after it land in the conversation they belong to.
    A client that names no session is still told apart by its system prompt."""
    first = cc.MAIN_PROMPT + "\nYou are powered by the model named Opus 4.8 (1M context)."
    resumed = cc.MAIN_PROMPT + "\nYou are powered by the model named Opus 4.8."
    tracker = Conversations()
    ones = [tracker.observe(n, cc.body("5f6", h, prompt=first), cc.SESSION)
            for n, h in enumerate(three_turns(), start=1)]
    summary_call = tracker.observe(
        4, cc.body("5f6", cc.summary_request(three_turns()[-1]), prompt=resumed), cc.SESSION)
    after = tracker.observe(
        5, cc.body("f9d", cc.continued("Now say what the first line was"), prompt=resumed),
        cc.SESSION)
    assert {c.conversation for c in (*ones, summary_call, after)} == {ones[0].conversation}
    assert [s.stage for s in after.stages] == ["client_summary"]

    anonymous = Conversations()
    bodies = [{k: v for k, v in cc.body("5f6", three_turns()[0], prompt=p).items()
               if k != "metadata"} for p in (first, resumed)]
    assert len({anonymous.observe(n, b).conversation for n, b in enumerate(bodies)}) == 2


def test_side_calls_of_the_same_session_neither_fake_nor_hide_a_compaction():
    """Claude Code's title and topic calls carry the session of the conversation they are
    about: one between a turn and the summary call must not take the compacted request
    away from its conversation, and one whose text says "summary" is no compaction."""
    main_turns = three_turns()
    title = {"model": "claude-haiku-4-5", "max_tokens": 512,
             "system": [{"type": "text", "text": "Generate a concise, sentence-case title"}],
             "metadata": cc.body("5f6", [])["metadata"],
             "messages": [cc.user("<session>write a summary of notes.txt</session>")]}
    probe = {**cc.body("5f6", [cc.user("quota")]), "max_tokens": 1}
    tracker = Conversations()
    ones = [tracker.observe(n, cc.body("5f6", h), cc.SESSION)
            for n, h in enumerate(main_turns, start=1)]
    sides = [tracker.observe(4, title, cc.SESSION), tracker.observe(5, probe, cc.SESSION)]
    summary_call = tracker.observe(6, cc.body("5f6", cc.summary_request(main_turns[-1])),
                                   cc.SESSION)
    after = tracker.observe(7, cc.body("f9d", cc.continued("Now say what the first line was")),
                            cc.SESSION)
    main = ones[0].conversation
    assert {c.conversation for c in (*ones, summary_call, after)} == {main}
    assert all(c.conversation != main and not c.stages and not c.removed for c in sides)
    assert [s.stage for s in after.stages] == ["client_summary"]


def test_a_slow_read_of_one_answer_does_not_put_the_next_before_it_in_the_recording(
        watch, messages_server, monkeypatch):
    """A sequential client's calls are recorded in their order, even when reading the first
    answer takes longer than the whole second call (the reads ran in threads, racing)."""
    import time

    import core.sources.watch.source as source_module

    read = source_module.read_exchange
    slow: list[int] = []

    def slow_first(x: Any) -> Any:
        if not slow:
            slow.append(x.id)
            time.sleep(0.5)
        return read(x)

    monkeypatch.setattr(source_module, "read_exchange", slow_first)
    client = anthropic.Anthropic(base_url=watch.url, api_key="k")
    for text in ("first", "second"):
        messages_server.reply_text("ok")
        client.messages.create(model="claude-opus-4-8", max_tokens=64,
                               messages=[{"role": "user", "content": text}])
    watch.wait_for(lambda w: len(w.of(WatchResponse)) == 2)
    assert watch.source is not None and watch.source.recording is not None
    lines = [json.loads(line) for line in
             watch.source.recording.path.read_text().splitlines()]
    assert [line["request"]["messages"][0]["content"] for line in lines] == ["first", "second"]
