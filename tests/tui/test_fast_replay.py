"""A replay played at top speed draws far fewer frames than it has requests (the pacer routes
its bursts together, the History draws only the lines on screen), but what the workbench
ends on is exactly what the events say: the same run replayed headless gives the figures
the meter, the Stages, the History and the Replay panel must show."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bench.sessions import claude_code_session
from core import events as ev
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.tui.conftest import wait_for
from tui.app import AppConfig, CtxlabApp
from tui.widgets.context_meter import ContextMeter
from tui.widgets.conversation import Conversation
from tui.widgets.replay_panel import ReplayPanel
from tui.widgets.stage_mark import StageMark
from tui.widgets.stage_timeline import StageTimeline
from tui.widgets.tool_block import ToolBlock

pytestmark = pytest.mark.anyio


def session(tmp_path: Path, size: int = 1_200_000) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(claude_code_session(size), encoding="utf-8")
    return path


def headless_events(path: Path, workdir: Path) -> list[ev.Event]:
    events: list[ev.Event] = []
    source = ReplaySource(load_recording(path), ReplayOptions(workdir=workdir,
                                                              seekable=False))
    assert asyncio.run(source.run(events.append))
    return events


def ended(app: CtxlabApp) -> bool:
    """The last request's events are routed: the Replay panel shows the last step (its
    events come after the step's stages) and the pacer holds nothing back."""
    step = app.query_one(ReplayPanel).step
    return app.source is not None and step is not None and step.index == app.source.total \
        and app.pacer.idle


def replay_app(path: Path, tmp_path: Path) -> CtxlabApp:
    """The workbench on ``path``, opened paused as ``ctxlab replay PATH --speed 0`` opens it."""
    recording = load_recording(path)
    return CtxlabApp(AppConfig(
        scenario=None, workspace=tmp_path / "w", paused=True, speed=1000.0,
        provider="replay", theme="ctxlab-dark",
        source=lambda folder: ReplaySource(recording, ReplayOptions(workdir=folder,
                                                                    hold_at_end=True))))


async def play_to_the_end(app: CtxlabApp, pilot: Any) -> float:
    """Resume at top speed and wait until the last step is routed and drawn; the longest
    wait the pacer reached meanwhile (once the stream stops it goes back to a frame)."""
    await pilot.pause(0.2)
    source = app.source
    assert source is not None
    source.resume()
    waits: list[float] = []

    def done() -> bool:
        waits.append(app.pacer.wait)
        return ended(app)

    await wait_for(pilot, done, timeout=120)
    await pilot.pause(0.2)
    return max(waits)


async def test_the_screen_after_a_top_speed_replay_is_what_the_events_say(
        tmp_path: Path) -> None:
    path = session(tmp_path)
    events = await asyncio.to_thread(headless_events, path, tmp_path / "headless")
    stages = [e for e in events if isinstance(e, ev.Stage)]
    mains = [e for e in events if isinstance(e, ev.ModelRequest) and e.purpose == "main"]
    calls = [e for e in events if isinstance(e, ev.ToolCall)]
    steps = [e for e in events if isinstance(e, ev.ReplayStep)]
    assert len(stages) > 100 and len(calls) > 100  # more than a screenful, many times over

    app = replay_app(path, tmp_path)
    async with app.run_test(size=(200, 55)) as pilot:
        longest = await play_to_the_end(app, pilot)
        assert longest > app.pacer.frame  # the bursts were routed together

        timeline = app.query_one(StageTimeline)
        assert [(r.event.stage, r.event.before_chars, r.event.after_chars)
                for r in timeline.stages] == [
            (e.stage, e.before_chars, e.after_chars) for e in stages]
        assert timeline.row_count == len(stages) and timeline.cursor_row == len(stages) - 1
        assert timeline.border_subtitle.startswith(f"{len(stages)} stages")

        meter = app.query_one(ContextMeter)
        assert meter.history == [e.chars for e in mains]
        assert meter.chars == mains[-1].chars and app.calls == len(mains)

        panel = app.query_one(ReplayPanel)
        assert panel.step is not None and panel.step.index == steps[-1].index == len(steps)

        history = app.query_one(Conversation)
        items = history.all_items()  # every call and every stage, in order, each once
        assert [w.tool_use_id for w in items if isinstance(w, ToolBlock)] == [
            e.id for e in calls]
        assert [w.event.stage for w in items if isinstance(w, StageMark)] == [
            e.stage for e in stages]
        assert history.items() == items  # all shown, as lines of a few widgets
        assert len(history.children) < 10 and len(history.runs()) == 1
        assert history.max_scroll_y == history.scroll_y > 0  # it followed to the end


async def test_the_item_cursor_reaches_the_oldest_item_of_a_long_replay(
        tmp_path: Path) -> None:
    """Every item stays reachable: ↑ from the newest walks back, the oldest is scrolled
    into view when selected, and Enter opens a call where it is."""
    path = session(tmp_path, 900_000)
    app = replay_app(path, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_the_end(app, pilot)
        history = app.query_one(Conversation)
        history.focus()
        await pilot.press("up")
        items = history.items()
        assert history.item_cursor is items[-1]
        await pilot.press("up")
        assert history.item_cursor is items[-2]
        first = next(item for item in items if isinstance(item, ToolBlock))
        history.select(first)
        await pilot.pause(0.1)
        run = first.run
        assert run is not None
        region = run.region_of(first)
        assert region is not None
        top = run.virtual_region.y + region.y
        assert history.scroll_y <= top < history.scroll_y + history.scrollable_content_region.height
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert not first.collapsed and run.region_of(first).height > 1
