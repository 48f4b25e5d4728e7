"""The Memory panel: hand edits picked up live, and the built-in editor's refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, TextArea

import core.memory.store as store_module
from tests.tui.conftest import play_to_end, wait_for
from tui.app import CtxlabApp
from tui.screens.memory_editor import MemoryEditor
from tui.widgets.memory_catalog import MemoryCatalog

pytestmark = pytest.mark.anyio

HAND_WRITTEN = """---
name: Deploy window
description: Deploys happen on Tuesdays only
type: project
---

Never deploy on a Friday.
"""


def catalog_keys(app: CtxlabApp) -> set[str]:
    table = app.query_one(MemoryCatalog).query_one(DataTable)
    return {str(k.value) for k in table.rows}


def notices(app: CtxlabApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_a_file_written_by_hand_appears_with_a_reloaded_notice(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        assert "deploy-window.md" not in catalog_keys(app)
        (tmp_path / "ws" / ".memory" / "deploy-window.md").write_text(HAND_WRITTEN)
        await wait_for(pilot, lambda: "deploy-window.md" in catalog_keys(app), timeout=2.0)
        await wait_for(pilot, lambda: any("reloaded: deploy-window.md" in n
                                          for n in notices(app)), timeout=1.0)
        assert "reloaded: deploy-window.md" in app.query_one(MemoryCatalog).border_subtitle
        # A broken hand edit is flagged with its reason, never dropped silently.
        (tmp_path / "ws" / ".memory" / "broken.md").write_text("no frontmatter here\n")
        await wait_for(pilot, lambda: "!broken.md" in catalog_keys(app), timeout=2.0)


async def open_editor(pilot, app: CtxlabApp, file: str) -> MemoryEditor:  # type: ignore[no-untyped-def]
    panel = app.query_one(MemoryCatalog)
    table = panel.query_one(DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(file))
    await pilot.press("enter")
    await pilot.pause(0.2)
    assert isinstance(app.screen, MemoryEditor)
    return app.screen


async def test_editor_refuses_invalid_frontmatter_saves_valid_creates_and_deletes(
        make_app: Callable[..., CtxlabApp], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ws" / ".memory" / "indentation.md"
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        original = path.read_bytes()
        editor = await open_editor(pilot, app, "indentation.md")
        area = editor.query_one(TextArea)
        area.text = "---\nname: Indentation\ntype: nonsense\n---\n\nTabs.\n"
        await pilot.press("ctrl+s")
        await pilot.pause(0.1)
        error = str(editor.query_one("#editor-error", Static).render())
        assert "not saved" in error and "description" in error
        assert path.read_bytes() == original  # nothing written
        assert isinstance(app.screen, MemoryEditor)

        writes: list[Path] = []
        real = store_module.atomic_write
        monkeypatch.setattr(store_module, "atomic_write",
                            lambda p, data: (writes.append(Path(p)), real(p, data))[1])
        area.text = ("---\nname: Indentation\ndescription: Tabs, width 4\ntype: user\n---\n\n"
                     "Indent with tabs; a tab is four columns wide.\n")
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, MemoryEditor)
        assert path in writes  # through the store's atomic write
        text = path.read_text()
        assert "description: Tabs, width 4" in text and "four columns" in text
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
        assert any("saved: indentation.md" in n for n in notices(app))

        # A new record through the editor, then a delete that asks first.
        app.query_one(MemoryCatalog).query_one(DataTable).focus()
        await pilot.press("a")
        await pilot.pause(0.2)
        editor = app.screen
        assert isinstance(editor, MemoryEditor)
        editor.query_one(TextArea).text = HAND_WRITTEN
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert "deploy-window.md" in catalog_keys(app)
        table = app.query_one(MemoryCatalog).query_one(DataTable)
        table.move_cursor(row=table.get_row_index("deploy-window.md"))
        await pilot.press("d")
        await pilot.pause(0.1)
        await pilot.press("n")  # keep it
        await pilot.pause(0.1)
        assert (tmp_path / "ws" / ".memory" / "deploy-window.md").exists()
        await pilot.press("d")
        await pilot.pause(0.1)
        await pilot.press("y")
        await pilot.pause(0.2)
        assert not (tmp_path / "ws" / ".memory" / "deploy-window.md").exists()
        assert "deploy-window.md" not in catalog_keys(app)
