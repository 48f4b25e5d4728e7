"""Esc leaves the memory editor (asking first when there are edits); viewers show message
text wrapped and unescaped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, TextArea

from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.screens.confirm import Confirm
from tui.screens.memory_editor import MemoryEditor
from tui.screens.viewer import Viewer, pretty_jsonl
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.model_view import ModelView
from tui.widgets.readable import readable_message

pytestmark = pytest.mark.anyio

SUMMARY = {"role": "user", "content": '[Compacted]\nGoal: "tabs"\nUser constraints: none'}


async def test_esc_closes_a_blank_template_at_once(make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        app.query_one(MemoryCatalog).query_one(DataTable).focus()
        await pilot.press("a")
        await pilot.pause(0.2)
        assert isinstance(app.screen, MemoryEditor)
        assert app.focused is app.screen.query_one(TextArea)  # Esc goes to the editor first
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, (MemoryEditor, Confirm))


async def test_esc_with_edits_asks_before_discarding(make_app: Callable[..., CtxlabApp],
                                                     tmp_path: Path) -> None:
    path = tmp_path / "ws" / ".memory" / "indentation.md"
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        original = path.read_bytes()
        table = app.query_one(MemoryCatalog).query_one(DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("indentation.md"))
        await pilot.press("enter")
        await pilot.pause(0.2)
        editor = app.screen
        assert isinstance(editor, MemoryEditor)
        await pilot.press("x", "y", "z")
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")  # keep editing: the edit is still there
        await pilot.pause(0.1)
        assert app.screen is editor and "xyz" in editor.query_one(TextArea).text
        await pilot.press("escape")
        await pilot.pause(0.1)
        await pilot.press("y")  # discard
        await pilot.pause(0.1)
        assert not isinstance(app.screen, (MemoryEditor, Confirm))
        assert path.read_bytes() == original


def test_a_message_reads_unescaped_block_by_block() -> None:
    message = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": 'line one\n"two"'},
        {"type": "text", "text": 'say "hi"\nbye'}]}
    text = readable_message(message)
    assert 'line one\n"two"' in text and 'say "hi"\nbye' in text
    assert "\\n" not in text and '\\"' not in text
    assert readable_message(SUMMARY).splitlines()[1:] == SUMMARY["content"].splitlines()
    # A transcript file is read the same way, message by message.
    jsonl = json.dumps(SUMMARY) + "\n" + json.dumps(message) + "\n"
    shown = pretty_jsonl(jsonl)
    assert "// message 0" in shown and "// message 1" in shown and "\\n" not in shown


async def test_open_whole_shows_the_message_wrapped_and_unescaped(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await play_to_end(pilot)
        await pilot.press("v")
        await pilot.pause(0.2)
        view = app.query_one(ModelView)
        view.focus()
        summary = next(i for i, m in enumerate(view.messages)
                       if isinstance(m.get("content"), str) and "\n" in m["content"])
        view.index = summary
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Viewer)
        area = app.screen.query_one(TextArea)
        assert area.soft_wrap
        content = view.messages[summary]["content"]
        assert area.text == f"role: user\n{content}"  # its own newlines, not JSON's \\n
