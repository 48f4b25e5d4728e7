"""The sides the Items and Diff views follow: the shared fold's requests, with ages, and a
watched request's turn before it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from core.events import Emitter, ReplayStep, WatchRequest
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request
from core.views.sides import Sides, previous_turns, summary_asked

FIXTURES = Path(__file__).parents[2] / "fixtures"


def test_both_sides_of_a_replay_with_the_steps_figures(tmp_path: Path) -> None:
    events: list = []
    source = ReplaySource(load_recording(FIXTURES / "replay" / "watch-2.1.197" /
                                         "compactions.jsonl"),
                          ReplayOptions(workdir=tmp_path / "w", seekable=False))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    sides = Sides()
    for event in events:
        sides.see(event)
    step = [e for e in events if isinstance(e, ReplayStep)][-1]
    assert sides.names() == ["original", "ctxlab"]  # the recorded agent sends first
    original, ours = sides.get("original"), sides.get("ctxlab")
    assert original is not None and ours is not None
    assert (original.number, original.cur.messages, original.cur.chars) == \
        (step.index, step.original_messages, step.original_chars)
    assert (ours.number, ours.cur.messages, ours.cur.chars) == \
        (step.index, step.ctxlab_messages, step.ctxlab_chars)
    assert original.prev is not None and original.ages.current == step.index
    assert sides.chars_per_token is not None


def test_a_watched_turn_is_compared_with_the_turn_before_its_summary_request() -> None:
    sent = json.loads((FIXTURES / "watch" / "claude-code-2.1.197-requests.json")
                      .read_text("utf-8"))
    conversations = Conversations()
    requests: dict[int, WatchRequest] = {}
    for number, call in enumerate(sent[:5], start=1):
        headers = call["headers"]
        x = Exchange(id=number, method="POST", path=call["path"],
                     body=json.dumps(call["body"]).encode(), started=0.0,
                     session=headers.get("x-claude-code-session-id"),
                     agent=headers.get("x-claude-code-agent-id"))
        _, event, _ = measure_request(x, conversations)
        assert isinstance(event, WatchRequest)
        requests[number] = event
    assert requests[4].purpose == "summary"
    assert previous_turns(requests, 5)[:1] == [3]  # the summary request is no turn
    assert summary_asked(requests, 5, 3) and not summary_asked(requests, 3, 2)
