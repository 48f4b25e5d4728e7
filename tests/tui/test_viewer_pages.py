"""A result larger than one viewer's worth is read in parts: every character is reachable,
and no part puts more than :data:`MAX_CHARS` into the TextArea (a multi-megabyte text in one
TextArea stalls the app for seconds, on every resize too)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.screens.viewer import MAX_CHARS, Viewer

pytestmark = pytest.mark.anyio


def long_text(chars: int) -> str:
    """Numbered lines with a two-byte character in each: a part cut by bytes would show."""
    return "".join(f"é line {n:07d}\n" for n in range(chars // 15 + 1))[:chars]


async def read_every_part(pilot: object, viewer: Viewer) -> list[str]:
    area = viewer.query_one(TextArea)
    parts = [area.text]
    for _ in range(10):
        await pilot.press("n")  # type: ignore[attr-defined]
        await pilot.pause(0.05)  # type: ignore[attr-defined]
        if area.text == parts[-1]:
            break
        parts.append(area.text)
    return parts


@pytest.mark.parametrize("source", ["text", "file"])
async def test_a_long_result_is_read_part_by_part_to_its_end(
        make_app: Callable[..., CtxlabApp], tmp_path: Path, source: str) -> None:
    text = long_text(2 * MAX_CHARS + 12_345)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await play_to_end(pilot)  # the run's own redraws are over before the viewer opens
        if source == "file":
            (tmp_path / "ws").mkdir(exist_ok=True)
            (tmp_path / "ws" / "big.txt").write_text(text, encoding="utf-8")
            viewer = Viewer.for_file(tmp_path / "ws", "big.txt")
        else:
            viewer = Viewer("result", text)
        await app.push_screen(viewer)
        await pilot.pause(0.1)
        assert app.screen is viewer
        parts = await read_every_part(pilot, viewer)
        assert len(parts) == 3 and all(len(p) <= MAX_CHARS for p in parts)
        assert "".join(parts) == text
        note = str(viewer.query_one("#viewer-note", Static).render())
        assert "3" in note and f"{len(text):,}" in note  # the last of three parts, of all
        await pilot.press("p")
        await pilot.pause(0.05)
        assert viewer.query_one(TextArea).text == parts[1]
        assert app.screen is viewer  # p pages back, it opens nothing else


async def test_a_short_text_has_one_part_and_no_part_keys(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await play_to_end(pilot)
        viewer = Viewer("short", "hello\n")
        await app.push_screen(viewer)
        await pilot.pause(0.1)
        assert viewer.check_action("page", (1,)) is False
        assert viewer.query_one(TextArea).text == "hello\n"
