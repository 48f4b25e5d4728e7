"""Fixtures for the workbench tests: a fixed scenario, a fixed workspace, stable screens.

Snapshots must not change between runs, so blinking cursors are frozen (Harlequin's trick),
transcript names (normally random uuids) are made sequential, the header shows a fixed
workspace label instead of a temporary path, and notifications are cleared before a shot.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tui.app import AppConfig, CtxlabApp
from tui.i18n import set_language
from tui.widgets.history_item import HistoryItem
from tui.widgets.item_run import ItemRun

FIXTURES = Path(__file__).parent / "fixtures"
TINY = str(FIXTURES / "tiny.yaml")
TINY_ZH = str(FIXTURES / "tiny-zh.yaml")
PAIRS = str(FIXTURES / "pairs.yaml")  # snip cuts inside tool pairs once protection is off


@pytest.fixture(autouse=True)
def frozen_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """No blinking: a cursor is either always shown or never, whatever the clock says."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)


@pytest.fixture(autouse=True)
def english_after_each_test() -> Iterator[None]:
    """An app sets the process's UI language when it starts: never let it leak onward."""
    yield
    set_language("en")


@pytest.fixture
def sequential_uuids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcript files are named by uuid4: make the names the same on every run."""
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., CtxlabApp]:
    """A workbench on the tiny scenario in ``tmp_path/ws``, at full speed, fixed theme."""

    def make(**changes: Any) -> CtxlabApp:
        settings: dict[str, Any] = dict(scenario=TINY, workspace=tmp_path / "ws",
                                        speed=1000.0, theme="ctxlab-dark",
                                        display_workspace="~/demo")
        settings.update(changes)
        return CtxlabApp(AppConfig(**settings))

    return make


async def wait_for(pilot: Pilot[Any], predicate: Callable[[], bool],
                   timeout: float = 10.0) -> None:
    """Let the app run until ``predicate()`` holds (fail after ``timeout`` seconds)."""
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached in time")


async def turn_done(pilot: Pilot[Any]) -> None:
    """Live mode: until the session waits for the next prompt, and its turn is drawn."""
    app = pilot.app
    assert isinstance(app, CtxlabApp)
    # …and the turn's last events routed: bursts that keep coming wait their turn together
    # (tui/pacer.py)
    await wait_for(pilot, lambda: app.source is not None and app.source.awaiting_prompt
                   and app.pacer.idle)
    await pilot.pause(0.15)


async def replayed(pilot: Pilot[Any], timeout: float = 10.0) -> CtxlabApp:
    """A replay at its end with every event it sent routed: the pacer routes a burst in
    slices, and between two slices the panels show part of it (tui/routing.py)."""
    app = pilot.app
    assert isinstance(app, CtxlabApp)
    await wait_for(pilot, lambda: app.at_end() and app.pacer.idle, timeout=timeout)
    return app


async def play_to_end(pilot: Pilot[Any]) -> CtxlabApp:
    """Run the scenario to its end and let every queued event be drawn."""
    app = pilot.app
    assert isinstance(app, CtxlabApp)
    await wait_for(pilot, lambda: app.finished)
    await app.workers.wait_for_complete()
    await pilot.pause(0.15)  # the views refresh on a 50 ms timer
    return app


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (Textual's loop), through anyio's pytest plugin."""
    return "asyncio"


async def run_of(app: App[Any], *items: HistoryItem) -> ItemRun:
    """A run of History items mounted in ``app``'s ``#view`` scroll view."""
    run = ItemRun()
    run.add(items)
    await app.query_one("#view").mount(run)
    return run
