"""The turn diff: counts and entries, and the watch's counts are this comparison's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.sources.replay.original import CLEARED
from core.sources.watch import conversations as watch_conversations
from core.sources.watch.conversations import Conversations
from core.sources.watch.exchange import Exchange, measure_request
from core.views.turn_diff import diff

FIXTURES = Path(__file__).parents[2] / "fixtures"
WATCH_BODIES = FIXTURES / "watch" / "claude-code-2.1.197-requests.json"
RECORDINGS = sorted((FIXTURES / "replay").glob("watch-*/*.jsonl"))
PATHS = {"responses": "/v1/responses", "responses.compact": "/v1/responses/compact",
         "chat.completions": "/v1/chat/completions"}


def use(call_id: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": "ls"}}]}


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": content}]}


def test_appended_only():
    prev = [{"role": "user", "content": "hi"}]
    cur = [*prev, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "go"}]
    found = diff(prev, cur)
    assert (found.appended, found.removed, found.changed) == (2, 0, 0)
    assert found.counts == "+2 −0 ~0"
    assert [(b.sign, b.index, b.role, b.preview) for b in found.blocks] == \
        [("+", 1, "assistant", "hello"), ("+", 2, "user", "go")]


def test_a_cleared_result_is_changed_and_removed_and_appended_entries_are_listed():
    prev = [{"role": "user", "content": "old question " * 20},
            use("t1"), result("t1", "x" * 3000),
            {"role": "assistant", "content": "done"}]
    cur = [{"role": "user", "content": "summary of the past"},
           use("t1"), result("t1", CLEARED),
           {"role": "assistant", "content": "done"}, {"role": "user", "content": "next"}]
    found = diff(prev, cur)
    assert (found.appended, found.removed, found.changed, found.inserted) == (1, 1, 1, 1)
    signs = [(b.sign, b.kind) for b in found.blocks]
    # the summary took the past's place: inserted among the entries kept, not appended
    assert signs == [("-", "text"), ("~", "tool_result"), ("^", "summary"), ("+", "text")]
    changed = found.blocks[1]
    assert (changed.index, changed.preview, changed.before_chars) == (2, CLEARED, 3002)
    assert changed.chars == len(json.dumps(CLEARED))
    assert found.blocks[0].preview.startswith("old question")


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every comparison the watch makes, with its counts."""
    calls: list[tuple[Any, ...]] = []
    real = watch_conversations.diff_requests

    def spy(prev: list[Any], cur: list[Any], **kw: Any) -> Any:
        out = real(prev, cur, **kw)
        calls.append((list(prev), list(cur), kw.get("summary_asked", False), out[:3]))
        return out

    monkeypatch.setattr(watch_conversations, "diff_requests", spy)
    return calls


def _check(calls: list[tuple[Any, ...]]) -> None:
    assert calls, "the watch compared no requests"
    for prev, cur, asked, counts in calls:
        found = diff(prev, cur, summary_asked=asked)
        assert (found.appended, found.removed, found.changed) == counts
        assert sum(b.sign == "+" for b in found.blocks) == found.appended
        assert sum(b.sign == "-" for b in found.blocks) == found.removed
        assert sum(b.sign == "~" for b in found.blocks) == found.changed
        assert sum(b.sign == "^" for b in found.blocks) == found.inserted


def test_the_watchs_counts_are_the_turn_diffs_on_claude_codes_bodies(monkeypatch):
    calls = _spy(monkeypatch)
    conversations = Conversations()
    for number, call in enumerate(json.loads(WATCH_BODIES.read_text("utf-8")), start=1):
        headers = call["headers"]
        x = Exchange(id=number, method="POST", path=call["path"],
                     body=json.dumps(call["body"]).encode(), started=0.0,
                     session=headers.get("x-claude-code-session-id"),
                     agent=headers.get("x-claude-code-agent-id"))
        measure_request(x, conversations)
    assert any(removed for *_, (_, removed, _) in calls)  # the compactions are in it
    _check(calls)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_watchs_counts_are_the_turn_diffs_on_the_recordings(monkeypatch, path):
    calls = _spy(monkeypatch)
    conversations = Conversations()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        row = json.loads(line)
        x = Exchange(id=number, method="POST", path=PATHS.get(row.get("api"), "/v1/messages"),
                     body=json.dumps(row["request"]).encode(), started=0.0,
                     session=row.get("conversation"))
        measure_request(x, conversations)
    _check(calls)
