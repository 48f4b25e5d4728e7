"""docs/EXTENDING.md, "Adding a panel" and "Adding an event source", in the workbench: a
toy panel written here is its widget plus one registration — it gets the next digit key,
its place in the narrow layout's strip and a palette entry, draws events, and starts over
empty at every run — and a toy source plays in the workbench from one line."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Markdown, Static

from core import events as ev
from core.sources import Capability
from tests.core.sources.test_extending import Ticker
from tests.tui.conftest import play_to_end
from tui import panels
from tui.app import AppConfig, CtxlabApp
from tui.app_panels import PanelStrip
from tui.commands import CtxlabCommands
from tui.i18n import CATALOGS
from tui.routing import Routed, RunInfo, handles
from tui.widgets.conversation import Conversation

pytestmark = pytest.mark.anyio


class ToolCount(Routed, Static, can_focus=True):
    """How many tools the agent called."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("0 tool calls", **kwargs)
        self.count = 0

    def reset(self, run: RunInfo) -> None:
        self.count = 0
        self.draw()

    @handles(ev.ToolCall)
    def count_call(self, event: ev.ToolCall) -> None:
        self.count += 1
        self.redraw_once(self.draw)

    def draw(self) -> None:
        self.update(f"{self.count} tool calls")


TOOLS = panels.Panel("tools", "right", lambda app: ToolCount(id="tools"))


@pytest.fixture
def tools_panel(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setitem(CATALOGS["en"], "panel.tools", "Tools")  # its label, in the locales
    # beside the other right-hand panels: it takes the next digit, the tabs after it shift
    with panels.registered(TOOLS, after="memory"):
        yield TOOLS


async def test_a_panel_is_its_widget_plus_one_registration(
        tools_panel: panels.Panel, make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:  # narrow: one right panel at a time
        await play_to_end(pilot)
        widget = app.query_one(ToolCount)
        assert widget.count > 0 and "-panel" in widget.classes
        ran = widget.count
        key = panels.keys()["tools"]
        assert key == "7"  # the next digit after Memory's
        assert f"{key} Tools" in str(app.query_one(PanelStrip).render())
        titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
        assert "Go to Tools" in titles
        await pilot.press(key)
        await pilot.pause(0.1)
        assert app.shown_panel == "tools" and widget.display and app.focused is widget
        # A new run starts it over: empty first, then this run's calls only.
        app.config.paused = True
        await app.start_run(app.config.scenario, None)
        await pilot.pause(0.1)
        assert widget.count == 0
        assert app.source is not None
        app.source.resume()
        await play_to_end(pilot)
        assert widget.count == ran


async def test_a_source_plays_in_the_workbench_from_one_line(tmp_path: Path) -> None:
    app = CtxlabApp(AppConfig(scenario=None, source=lambda workspace: Ticker(),
                              workspace=tmp_path, theme="ctxlab-dark"))
    async with app.run_test(size=(160, 40)) as pilot:
        await play_to_end(pilot)
        said = "".join(md.source for md in app.query_one(Conversation).query(Markdown))
        assert "tick 0" in said and "tick 4" in said
        assert app.scenario_title == "ticker" and app.source is not None
        assert app.source.offers(Capability.STEP) and not app.source.offers(Capability.SEND)


async def test_the_tenth_keyed_panel_gets_0_and_an_eleventh_none(
        monkeypatch: pytest.MonkeyPatch, make_app: Callable[..., CtxlabApp]) -> None:
    """Digits run 1–9 then 0, as the keyboard does; a panel past the tenth keeps its
    palette entry (it has no digit left)."""
    extra = [panels.Panel(f"extra{n}", "tab", lambda app, n=n: ToolCount(id=f"extra{n}"))
             for n in range(11 - len(panels.keyed()))]
    for panel in extra:
        monkeypatch.setitem(CATALOGS["en"], f"panel.{panel.name}", panel.name)
    with contextlib.ExitStack() as stack:
        for panel in extra:
            stack.enter_context(panels.registered(panel))
        keys = panels.keys()
        names = [p.name for p in panels.keyed()]
        assert [keys.get(name) for name in names] == [*"1234567890", None]
        tenth = names[9]
        app = make_app()
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.press("0")
            await pilot.pause(0.1)
            assert app.focused is app.query_one(f"#{tenth}")
            titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
            assert f"Go to {names[10]}" in titles


async def test_a_right_hand_panel_past_the_tenth_is_named_in_the_strip_without_a_key(
        monkeypatch: pytest.MonkeyPatch, make_app: Callable[..., CtxlabApp]) -> None:
    monkeypatch.setitem(CATALOGS["en"], "panel.tools", "Tools")
    with panels.registered(TOOLS):  # last: the eleventh keyed panel, no digit left
        assert panels.keys().get("tools") is None
        app = make_app()
        async with app.run_test(size=(100, 30)) as pilot:  # the strip names the panels
            await pilot.pause(0.2)
            strip = str(app.query_one(PanelStrip).render())
            assert "│Tools" in strip.replace(" ", "") or strip.rstrip().endswith("Tools")
            app.action_panel("tools")
            await pilot.pause(0.1)
            assert app.shown_panel == "tools"
