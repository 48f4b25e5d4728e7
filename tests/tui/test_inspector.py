"""The stage inspector: before/after of a snip side by side, highlighted, with its ledger."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable

from core.archive.store import Archive, archive_marker_path
from core.measure import json_chars, list_chars
from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.screens.inspector import Inspector
from tui.stage_diff import Side, diff_rows, fold, sides
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


async def test_inspector_shows_before_and_after_of_a_snip(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        record = next(r for r in app.query_one(StageTimeline).stages
                      if r.event.stage == "snip_compact")
        timeline.focus()
        timeline.move_cursor(row=record.index - 1)
        await pilot.press("enter")
        await pilot.pause(0.2)
        screen = app.screen
        assert isinstance(screen, Inspector) and screen.record is record
        before_rows = screen.query(".diff-row")
        kinds = {c for w in before_rows for c in w.classes if c.startswith("-")}
        assert {"-removed", "-added"} <= kinds  # the archived middle and the new marker
        left = screen.query_one("#before-list").query(".diff-row")
        right = screen.query_one("#after-list").query(".diff-row")
        assert any("-removed" in w.classes for w in left)
        assert not any("-removed" in w.classes for w in right)
        added = [w for w in right if "-added" in w.classes]
        assert len(added) == 1  # exactly one marker replaces the middle
        # The transcript the snip wrote holds the before list, message for message.
        transcript = record.transcript
        assert transcript is not None
        saved = Archive(tmp_path / "ws").read_transcript(transcript)
        assert len(saved) == record.event.before_messages
        # The ledger names where each removed result went, then the files the stage wrote.
        ledger = screen.query_one("#inspector-ledger", DataTable)
        wheres = [str(ledger.get_row_at(i)[2]) for i in range(ledger.row_count)]
        assert wheres == [e["where"] for e in record.event.ledger] + [transcript]
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, Inspector)
        # Every stage's recorded lists measure exactly what the stage reported.
        for rec in app.query_one(StageTimeline).stages:
            before, after = sides(rec)
            e = rec.event
            assert before.messages is not None and after.messages is not None, e.stage
            assert (json_chars(before.messages), len(before.messages)) == \
                (e.before_chars, e.before_messages), (rec.index, e.stage, before.source)
            assert (json_chars(after.messages), len(after.messages)) == \
                (e.after_chars, e.after_messages), (rec.index, e.stage, after.source)
            # and each message's size, which the inspector states, is the stage's measure
            left, right = diff_rows(before, after)
            for row in left + right:
                assert row.chars == json_chars(row.message), (rec.index, e.stage)
            assert list_chars(before.sizes) == e.before_chars


def test_diff_marks_a_snip_as_removed_middle_and_added_marker() -> None:
    head = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "ok"}]
    middle = [{"role": "user", "content": f"m{i}"} for i in range(5)]
    tail = [{"role": "assistant", "content": "done"}]
    marker = {"role": "user", "content": "[5 messages archived at .transcripts/t.jsonl]"}
    left, right = diff_rows(Side(head + middle + tail, "before"),
                            Side([*head, marker, *tail], "after"))
    assert [r.kind for r in left] == ["kept"] * 2 + ["removed"] * 5 + ["kept"]
    assert [r.kind for r in right] == ["kept", "kept", "added", "kept"]
    assert archive_marker_path(right[2].message["content"]) == ".transcripts/t.jsonl"


def test_diff_marks_a_swapped_result_as_changed_and_folds_long_unchanged_runs() -> None:
    def result(content: str) -> dict:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                             "content": content}]}

    same = [{"role": "assistant", "content": f"s{i}"} for i in range(8)]
    left, right = diff_rows(Side([*same, result("x" * 500)], "before"),
                            Side([*same, result("[Earlier tool result saved at f.txt]")],
                                 "after"))
    assert left[-1].kind == right[-1].kind == "changed"
    folded = fold(left)
    assert folded[1] == 6 and len(folded) == 4  # first, "6 unchanged", last, the change
