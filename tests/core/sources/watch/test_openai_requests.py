"""OpenAI requests measured and grouped as Messages requests are, from the real Codex shape.

The first request is the one Codex 0.171 really sent (tests/fixtures/watch, headers without
the key); the ones after it are built from it the way Codex builds them: the history
resent whole, the context it re-injects after a compaction under new item ids, its local
checkpoint summary and its remote ``compaction`` item. A compaction shows on the request
after it, never on the compaction request itself; nothing else is called one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.compact.breakdown import CATEGORIES
from core.events import Stage, WatchRequest
from core.measure import json_chars
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request
from core.sources.watch.openai_requests import item_breakdown, measure
from tests.support.openai_wire import compaction_item, function_call_item, reasoning_item

FIXTURE = Path(__file__).parents[3] / "fixtures" / "watch" / "codex-0.171.0-request.json"
CHECKPOINT = "You are performing a CONTEXT CHECKPOINT COMPACTION. Summarize the task so far."
SUMMARY = ("Another language model started to solve this problem and produced a summary of "
           "its thinking process.\nThe user asked to count lines; 3 lines were found.")


@pytest.fixture(scope="module")
def sent() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


class Watched:
    """Requests fed to one watch's measure, numbered as the proxy numbers them."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers
        self.conversations = Conversations()
        self.number = 0

    def send(self, body: dict[str, Any], *, path: str = "/v1/responses",
             kind: str = "turn", trigger: str | None = None, window: int = 0
             ) -> tuple[WatchRequest, tuple[Stage, ...]]:
        self.number += 1
        metadata = {**json.loads(self.headers["x-codex-turn-metadata"]), "request_kind": kind}
        if trigger is not None:
            metadata["compaction"] = {"trigger": trigger, "reason": "context_limit"}
        x = Exchange(id=self.number, method="POST", path=path,
                     body=json.dumps(body).encode(), started=0.0,
                     session=self.headers["session-id"],
                     window=f"{self.headers['session-id']}:{window}",
                     turn_metadata=json.dumps(metadata))
        _, event, stages = measure_request(x, self.conversations)
        return event, stages  # type: ignore[return-value]


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}], **extra}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def with_input(body: dict[str, Any], items: list[Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["input"] = items
    out.update(changes)
    return out


def reinjected(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The context Codex puts back after a compaction: the same text under new ids."""
    return [{**item, "id": f"msg_new_{n}"} for n, item in enumerate(items)]


def tool_turn(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The real history plus one tool round trip, as Codex's next request holds it."""
    return [*body["input"], reasoning_item("Count them.", encrypted="gAAAA" + "e" * 900),
            function_call_item("exec_command", {"cmd": "wc -l notes.txt"}, "call_wc"),
            output("call_wc", "3 notes.txt\n" * 40)]


def test_the_real_codex_request_is_measured_in_the_project_categories(sent):
    body = sent["body"]
    event, stages = Watched(sent["headers"]).send(body)
    assert stages == ()
    assert (event.api, event.purpose, event.model, event.stream) == (
        "responses", "main", "gpt-5-codex", True)
    assert event.messages == len(body["input"]) == 4
    assert event.chars == json_chars(body["input"])
    assert set(event.breakdown) == set(CATEGORIES) - {"memory", "recalled", "pinned"}
    message_parts = {k: v for k, v in event.breakdown.items() if k not in ("system", "tools")}
    assert sum(message_parts.values()) == event.chars
    developer = [i for i in body["input"] if i["role"] == "developer"]
    assert event.breakdown["system_messages"] == sum(json_chars(i["content"])
                                                     for i in developer)
    assert event.breakdown["tools"] == json_chars(body["tools"])
    assert event.breakdown["system"] == 0  # Codex sends no ``instructions`` field
    assert event.est_tokens > event.chars // 8
    assert event.conversation is not None


def test_every_item_kind_lands_in_its_category():
    items = [user("hi"), {"type": "message", "role": "developer", "content": "rules"},
             {"type": "message", "role": "user", "content": [
                 {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
             function_call_item("f", {"a": 1}, "c1"), output("c1", "out"),
             {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch",
              "input": "patch"},
             {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
             {"type": "local_shell_call", "call_id": "c3", "action": {"command": ["ls"]}},
             reasoning_item("why", encrypted="gAAAA" + "r" * 500), compaction_item("gAAAAc"),
             user(SUMMARY), "not an item", {"type": "future_kind", "x": 1}]
    parts = [item_breakdown(i) for i in items]
    for item, sizes in zip(items, parts, strict=True):
        assert sum(sizes.values()) == json_chars(item)
    main = [max(p, key=lambda k: p[k] if k != "structure" else -1) for p in parts[:11]]
    assert main == ["text", "system_messages", "images", "tool_calls", "tool_results",
                    "tool_calls", "tool_results", "tool_calls", "thinking", "summaries",
                    "summaries"]
    assert parts[8]["thinking"] == json_chars(items[8])  # encrypted content counted
    whole = measure({"input": items, "instructions": "Be brief.", "tools": [{"x": 1}]})
    assert whole.chars == json_chars(items)
    assert sum(v for k, v in whole.breakdown.items() if k not in ("system", "tools")) \
        == whole.chars
    assert whole.breakdown["system"] == json_chars("Be brief.")


def test_a_growing_codex_history_is_never_called_a_compaction(sent):
    body = sent["body"]
    watched = Watched(sent["headers"])
    first, _ = watched.send(body)
    history = tool_turn(body)
    for turn in range(6):
        event, stages = watched.send(with_input(body, history))
        assert stages == () and event.conversation == first.conversation
        assert event.removed == 0 and event.rewritten == 0
        history = [*history, assistant(f"answer {turn}"), user(f"question {turn}")]


def test_codex_local_compaction_shows_on_the_request_after_the_checkpoint(sent):
    body = sent["body"]
    watched = Watched(sent["headers"])
    watched.send(body)
    turn = tool_turn(body)
    last, _ = watched.send(with_input(body, turn))
    asked, stages = watched.send(with_input(body, [*turn, user(CHECKPOINT)], tools=[]),
                                 kind="compaction", trigger="auto")
    assert asked.purpose == "summary" and stages == ()  # never on the request itself
    assert asked.conversation == last.conversation
    kept = [*reinjected(body["input"][:3]), body["input"][3], user(SUMMARY)]
    after, stages = watched.send(with_input(body, [*kept, user("And now?")]))
    [stage] = stages
    assert (stage.stage, stage.by, stage.trigger) == ("client_summary", "client", "auto")
    assert after.conversation == last.conversation
    assert (after.removed, after.appended) == (3, 1)  # the tool round trip; the new prompt
    assert (stage.before_messages, stage.after_messages) == (len(turn), len(kept))
    gone = [e for e in stage.ledger if "message_index" in e]
    assert {e["where"] for e in gone} == {"request 2"}
    # items have no role: the ledger names their kind, and a call by its tool and input
    assert [(e["role"], e["preview"][:20]) for e in gone] == [
        ("reasoning", "Count them."), ("function_call", 'exec_command {"cmd":'),
        ("function_call_output", "3 notes.txt\n3 notes.")]
    assert stage.ledger[-1]["summary"].startswith("Another language model")


def test_a_new_codex_window_says_it_compacted_when_the_watch_missed_the_request(sent):
    """Codex numbers its context windows (``x-codex-window-id: <thread>:<n>``), one more
    per compaction: a watch started after the compaction request still names it."""
    body = sent["body"]
    watched = Watched(sent["headers"])
    watched.send(with_input(body, tool_turn(body)), window=3)
    kept = [*reinjected(body["input"][:3]), body["input"][3], user(SUMMARY)]
    _, stages = watched.send(with_input(body, kept), window=4)
    assert [s.stage for s in stages] == ["client_summary"]
    _, stages = watched.send(with_input(body, [*kept[:4], user("cut again")]), window=4)
    assert [s.stage for s in stages] == ["client_truncate"]  # same window: no summary


def test_codex_remote_compaction_is_sized_by_its_encrypted_content(sent):
    body = sent["body"]
    watched = Watched(sent["headers"])
    watched.send(body)
    turn = tool_turn(body)
    watched.send(with_input(body, turn))
    asked, stages = watched.send(with_input(body, [*turn, {"type": "compaction_trigger"}]),
                                 kind="compaction", trigger="manual")
    assert asked.purpose == "compaction" and stages == ()
    item = {**compaction_item("gAAAA" + "z" * 4_000), "id": "cmp_1"}
    after, stages = watched.send(with_input(body, [*body["input"], item]))
    [stage] = stages
    assert (stage.stage, stage.trigger) == ("client_summary", "manual")
    assert stage.ledger[-1]["encrypted_chars"] == 4_005
    assert after.breakdown["summaries"] == json_chars(item)
    assert after.appended == 0 and after.encrypted_chars == 4_005
    assert asked.encrypted_chars == 905  # the reasoning item's


def test_a_responses_compact_call_by_any_client_shows_on_the_next_request(sent):
    body = {"model": "gpt-5", "instructions": "You help.", "input": [
        user("task"), assistant("one"), user("more"), assistant("two"), user("again")]}
    watched = Watched({**sent["headers"], "x-codex-turn-metadata": "{}"})
    first, _ = watched.send(body)
    compact, stages = watched.send(body, path="/v1/responses/compact")
    assert (compact.api, compact.purpose, stages) == ("responses.compact", "compaction", ())
    after, stages = watched.send({**body, "input": [compaction_item("gAAAA" + "q" * 50),
                                                    user("again"), user("next")]})
    assert [s.stage for s in stages] == ["client_summary"]
    assert after.conversation == first.conversation


def test_a_lost_head_is_a_truncation(sent):
    body = {"model": "gpt-5", "instructions": "You help.",
            "input": [user("first"), assistant("a"), user("second"), assistant("b")]}
    watched = Watched({**sent["headers"], "x-codex-turn-metadata": "{}"})
    first, _ = watched.send(body)
    cut, stages = watched.send({**body, "input": [user("second"), assistant("b"),
                                                  user("third")]})
    assert [s.stage for s in stages] == ["client_truncate"]
    assert (cut.conversation, cut.removed, cut.appended) == (first.conversation, 2, 1)


def test_previous_response_id_and_prewarm_are_placed_without_a_diff(sent):
    body = {"model": "gpt-5", "instructions": "You help.", "input": [user("start")],
            "tools": [{"type": "function", "name": "f"}]}
    watched = Watched({**sent["headers"], "x-codex-turn-metadata": "{}"})
    first, _ = watched.send(body)
    warm, stages = watched.send(body, kind="prewarm")
    assert (warm.purpose, warm.conversation, stages) == ("prewarm", first.conversation, ())
    chained, stages = watched.send({**body, "previous_response_id": "resp_1",
                                    "input": [output("c1", "ok"), user("go on")]})
    assert (chained.conversation, chained.appended, chained.removed, stages) == (
        first.conversation, 2, 0, ())


def test_chat_completions_are_grouped_by_system_prompt_and_first_user_message():
    def chat(*messages: dict[str, Any]) -> bytes:
        return json.dumps({"model": "gpt-4o", "stream": True, "messages": [
            {"role": "system", "content": "You are Aider."}, *messages]}).encode()

    conversations = Conversations()

    def send(number: int, body: bytes) -> WatchRequest:
        x = Exchange(id=number, method="POST", path="/chat/completions", body=body,
                     started=0.0)
        return measure_request(x, conversations)[1]

    a = send(1, chat({"role": "user", "content": "fix bug one"}))
    b = send(2, chat({"role": "user", "content": "fix bug two"}))
    call = {"id": "call_1", "type": "function",
            "function": {"name": "read", "arguments": "{\"path\": \"x\"}"}}
    a2 = send(3, chat({"role": "user", "content": "fix bug one"},
                      {"role": "assistant", "content": None, "tool_calls": [call]},
                      {"role": "tool", "tool_call_id": "call_1", "content": "file text"}))
    assert a.api == "chat.completions" and a.conversation != b.conversation
    assert (a2.conversation, a2.appended, a2.removed) == (a.conversation, 2, 0)
    assert a2.breakdown["system_messages"] == json_chars("You are Aider.")
    assert a2.breakdown["tool_calls"] == json_chars([call])
    assert a2.breakdown["tool_results"] == json_chars("file text")


@pytest.mark.parametrize("body", [
    {"input": "just a string"}, {"input": [1, None, "x", {"type": 5}]},
    {"messages": "nope"}, {"input": [{"type": "message", "role": "user", "content": 7}]},
    {"input": [{"type": "function_call_output", "call_id": None, "output": {"a": [1]}}]},
])
def test_odd_bodies_are_measured_without_a_traceback(body):
    x = Exchange(id=1, method="POST", path="/v1/responses", body=json.dumps(body).encode(),
                 started=0.0, turn_metadata="{not json")
    _, event, _ = measure_request(x, Conversations())
    parts = {k: v for k, v in event.breakdown.items() if k not in ("system", "tools")}
    assert sum(parts.values()) == event.chars
