"""The workbench shows any event source: a replay of a recorded session is an addition,
drawn by the same panels, with only the controls the source offers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from core.compact.breakdown import MESSAGE_CATEGORIES
from core.sources import Capability
from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import CLAUDE
from tests.tui.conftest import play_to_end, replayed, wait_for
from tui.app import AppConfig, CtxlabApp
from tui.commands import CtxlabCommands
from tui.screens.viewer import Viewer
from tui.widgets.context_meter import ContextMeter
from tui.widgets.model_view import ModelView
from tui.widgets.replay_panel import ReplayPanel
from tui.widgets.run_status import RunStatus
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


def replay_of(path: Path, hold: bool = False):  # type: ignore[no-untyped-def]
    def make(workspace: Path) -> ReplaySource:
        return ReplaySource(load_recording(path),
                            ReplayOptions(workdir=workspace, hold_at_end=hold))

    return make


async def test_a_replay_plays_in_the_workbench_with_its_own_and_ctxlabs_stages(
        tmp_path: Path) -> None:
    app = CtxlabApp(AppConfig(scenario=None, source=replay_of(CLAUDE),
                              workspace=tmp_path / "w", theme="ctxlab-dark",
                              display_workspace="~/replay"))
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        assert isinstance(app.source, ReplaySource) and not app.query("#prompt")
        assert CLAUDE.name in app.title and "provider replay" in app.sub_title
        by = {record.event.by for record in app.query_one(StageTimeline).stages}
        assert "claude-code" in by  # the recorded agent's own compaction, on the timeline
        assert app.calls == 6  # ctxlab's main requests beside the original's
        app.action_step()  # a replay can step: offered, and harmless at the end
        app.action_compare()  # a replay opens the what-if screen (no compare lab)
        await pilot.pause(0.1)
        status = str(app.query_one(RunStatus).render())
        assert "finished" in status and "o:" not in status  # no "another scenario" offer
        assert any("replay has ended" in str(n.message) for n in app._notifications)


def replay_app(tmp_path: Path, **changes) -> CtxlabApp:  # type: ignore[no-untyped-def]
    settings = dict(scenario=None, source=replay_of(CLAUDE), workspace=tmp_path / "w",
                    theme="ctxlab-dark", display_workspace="~/replay", paused=True)
    settings.update(changes)
    return CtxlabApp(AppConfig(**settings))


async def test_a_paused_replay_is_stepped_by_keys_to_the_original_compaction(
        tmp_path: Path) -> None:
    app = replay_app(tmp_path)
    async with app.run_test(size=(200, 55)) as pilot:
        panel = app.query_one(ReplayPanel)
        await wait_for(pilot, lambda: panel.start is not None)
        assert panel.display and panel.step is None  # opened paused: nothing played yet
        text = panel.text()
        assert "4.00 chars/token (estimate)" in text and "limit in chars: 50,000" in text
        assert "subagents/agent-3f9c2a1b.jsonl" in text  # listed with its path, to open
        await pilot.press("s")
        await wait_for(pilot, lambda: panel.step is not None)
        await pilot.pause(0.1)
        assert panel.step.index == 1 and app.paused  # one request, then paused again
        await pilot.press("n")  # to the next compaction, the original's or ctxlab's
        timeline = app.query_one(StageTimeline)
        await wait_for(pilot, lambda: timeline.row_count > 0)
        await pilot.pause(0.1)
        assert app.paused and not app.finished
        theirs = [r for r in timeline.stages if r.event.by == "claude-code"]
        assert theirs, "the original agent's compaction is on the Stages panel"
        row = " ".join(map(str, timeline.get_row(str(theirs[0].index))))
        assert "auto_compact" in row and "by Claude Code (auto) at 170,251 tok" in row
        assert "last Claude Code compaction" in panel.text()
        meter = app.query_one(ContextMeter)
        assert meter.recorded and meter.usage_tokens  # recorded usage: the real-token line
        # ctxlab's side: its own request's breakdown, adding up to its bar
        assert sum(meter.breakdown[k] for k in MESSAGE_CATEGORIES) == meter.chars
        # Enter on the original's row opens its summary text
        timeline.focus()
        timeline.move_cursor(row=theirs[0].index - 1)
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, Viewer)
        assert "compactions" in app.screen.title_text
        assert theirs[0].event.files[0].endswith(".md")
        await pilot.press("escape")
        await pilot.press("space")  # play on to the end
        await play_to_end(pilot)
        assert panel.step.index == panel.step.total


async def test_next_compaction_plays_a_scenario_on_to_its_next_stage(
        make_app: Callable[..., CtxlabApp]) -> None:
    """ctxlab's own run honours ``n`` through the same gate as a replay: it plays on and
    pauses right after the model call whose prepare() fired a stage."""
    app = make_app(paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        assert app.calls == 0 and app.paused
        await pilot.press("n")
        await wait_for(pilot, lambda: app.query_one(StageTimeline).row_count >= 1)
        source = app.source
        assert source is not None
        await wait_for(pilot, lambda: not source.seeking or app.finished)
        held = app.calls
        await pilot.pause(0.3)
        assert app.finished or (app.paused and app.calls == held)
        assert not app.query_one(ReplayPanel).display  # the Replay panel is a replay's


async def test_the_replay_speed_follows_the_speed_keys(tmp_path: Path) -> None:
    app = replay_app(tmp_path, speed=2.0)
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.05)
        assert app.source is not None and app.source.controls.speed == 2.0
        await pilot.press("plus")
        assert app.source.controls.speed == 4.0


async def test_a_replays_temporary_folder_is_removed_when_the_workbench_closes(
        tmp_path: Path) -> None:
    app = replay_app(tmp_path, workspace=None)
    async with app.run_test(size=(200, 55)) as pilot:
        await wait_for(pilot, lambda: app.query_one(ReplayPanel).start is not None)
        folder = app.workspace
        assert folder.name.startswith("ctxlab-source-") and (folder / ".replay").is_dir()
        await app.action_quit()
    assert not folder.exists()


async def test_a_named_workdir_is_kept(tmp_path: Path) -> None:
    app = replay_app(tmp_path, speed=1000.0, paused=False)
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
    assert (tmp_path / "w" / ".replay" / "compactions").is_dir()


async def test_the_palette_offers_the_jump_to_the_next_compaction(tmp_path: Path) -> None:
    from tui.commands import CtxlabCommands

    app = replay_app(tmp_path)
    async with app.run_test(size=(200, 55)) as pilot:
        await wait_for(pilot, lambda: app.query_one(ReplayPanel).start is not None)
        titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
        assert "Jump to the next compaction" in titles
        entry = next(c for title, c, _ in CtxlabCommands(app.screen).entries()
                     if title == "Jump to the next compaction")
        await entry()
        await wait_for(pilot, lambda: app.query_one(StageTimeline).row_count > 0)


async def test_a_paused_replay_shows_what_ctxlab_would_send_and_goes_back_and_forth(
        tmp_path: Path) -> None:
    """At a paused request the model view is ctxlab's side as that request sent it; stepping
    back or going to a request redraws every panel for that point, from the same events;
    at the end (as ``ctxlab replay`` opens it) the replay waits to be sent back."""
    app = replay_app(tmp_path, source=replay_of(CLAUDE, hold=True))
    async with app.run_test(size=(200, 55)) as pilot:
        panel = app.query_one(ReplayPanel)
        await wait_for(pilot, lambda: panel.start is not None)
        for _ in range(3):
            await pilot.press("s")
        await wait_for(pilot, lambda: panel.step is not None and panel.step.index == 3)
        await pilot.press("v")  # what the model sees
        await pilot.pause(0.2)
        view, meter = app.query_one(ModelView), app.query_one(ContextMeter)
        sent = app.sent
        assert sent is not None and sent.purpose == "main" and sent.sent
        assert view.messages == list(sent.sent) and len(view.messages) == sent.messages
        assert view.total == meter.chars == sent.chars == panel.step.ctxlab_chars
        assert sum(meter.breakdown[k] for k in MESSAGE_CATEGORIES) == meter.chars
        at_three = (view.messages, meter.chars, app.query_one(StageTimeline).row_count)

        await pilot.press("S")  # one request back
        await wait_for(pilot, lambda: panel.step is not None and panel.step.index == 2)
        await pilot.pause(0.2)
        assert app.paused and app.calls == 2 and panel.step.index == 2
        assert app.sent is not None and view.messages == list(app.sent.sent or ())
        assert 0 < len(view.messages) < len(at_three[0]) and view.total == meter.chars

        await pilot.press("g")  # and forward again, by number: the same point as before
        await pilot.pause(0.1)
        field = app.screen.query_one("#goto-input", Input)
        field.value = "3"
        await pilot.press("enter")
        await wait_for(pilot, lambda: panel.step is not None and panel.step.index == 3)
        await pilot.pause(0.2)
        assert (view.messages, meter.chars, app.query_one(StageTimeline).row_count) == at_three
        await pilot.press("space")
        await replayed(pilot)
        await pilot.pause(0.1)
        total = panel.step.total
        assert panel.step.index == total and not app.finished
        assert "at the end" in str(app.query_one(RunStatus).render())
        keys = {b.binding.key for b in app.active_bindings.values() if b.enabled}
        assert {"S", "g"} <= keys and not {"space", "s", "n"} & keys  # back is all there is
        titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
        assert "Step back one request" in titles and "Play another scenario" not in titles
        files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
        await pilot.press("S", "S")  # two steps back in a row go back two
        await wait_for(pilot, lambda: panel.step is not None and panel.step.index == total - 2
                       and app.source is not None and not app.source.seeking)
        await pilot.pause(0.2)
        assert app.paused and not app.at_end() and app.calls == total - 2
        # nothing was computed again: the same files, no second transcript
        assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) \
            == files
        await pilot.press("space")
        await replayed(pilot)
        assert app.source is not None and app.source.offers(Capability.FINISH)


async def test_the_palette_offers_only_what_works_for_the_source_shown(
        tmp_path: Path, make_app: Callable[..., CtxlabApp]) -> None:
    """A demo offers its memory commands and goes back like a replay; a replay offers its
    controls but not "New memory record" or "Show MEMORY.md" (no memory store is shown:
    they did nothing); a watch, which cannot pause, does not offer auto-pause either."""
    from core.sources.watch.source import WatchOptions, WatchSource

    memory = {"New memory record", "Show MEMORY.md"}
    demo = make_app(paused=True)
    async with demo.run_test(size=(200, 55)) as pilot:
        await pilot.pause(0.2)
        titles = {title for title, _, _ in CtxlabCommands(demo.screen).entries()}
        assert memory <= titles and "Auto-pause at new stages (on/off)" in titles
        assert {"Step back one request", "Jump to a request…"} <= titles
    replay = replay_app(tmp_path)
    async with replay.run_test(size=(200, 55)) as pilot:
        await wait_for(pilot, lambda: replay.query_one(ReplayPanel).start is not None)
        titles = {title for title, _, _ in CtxlabCommands(replay.screen).entries()}
        assert "Step back one request" in titles and not memory & titles
    source = WatchSource(WatchOptions(upstream="http://127.0.0.1:1", port=0, root=tmp_path,
                                      record=False))
    watch = CtxlabApp(AppConfig(scenario=None, source=lambda _workspace: source,
                                workspace=tmp_path / "ww"))
    async with watch.run_test(size=(200, 55)) as pilot:
        await wait_for(pilot, source.ready.is_set)
        titles = {title for title, _, _ in CtxlabCommands(watch.screen).entries()}
        assert not memory & titles and "Auto-pause at new stages (on/off)" not in titles
        assert "Quit" in titles
        await watch.end_session()  # the proxy and its measuring process, closed
        await pilot.pause(0.1)


async def test_ctxlab_replay_opens_the_workbench_paused_at_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing plays until the reader asks: the first request is not shown yet."""
    import tui.cli.cmd_app
    from tui.cli import main

    opened: list[AppConfig] = []
    monkeypatch.setattr(tui.cli.cmd_app, "launch", lambda config, theme: opened.append(config))
    main(["replay", str(CLAUDE), "--workdir", str(tmp_path / "w")])
    (config,) = opened
    app = CtxlabApp(config)
    async with app.run_test(size=(200, 55)) as pilot:
        panel = app.query_one(ReplayPanel)
        await wait_for(pilot, lambda: panel.start is not None)
        await pilot.pause(1.5)  # more than a request's time at the default ×1
        assert app.paused and panel.step is None and app.calls == 0
        assert str(app.query_one(RunStatus).render()).startswith("‖ paused")


async def test_n_jumps_to_the_next_compaction_and_says_so_on_the_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At ×1 (a request a second) ``n`` does not wait the pace between requests, and while a
    step is slow (a real summary call) the status line says where it is going, not
    "paused"; once there, paused at the compaction."""
    slow = ReplaySource._play_step

    async def slow_step(self: ReplaySource, step: object) -> None:
        await asyncio.sleep(0.3)  # as a real summary call would be
        await slow(self, step)  # type: ignore[arg-type]

    monkeypatch.setattr(ReplaySource, "_play_step", slow_step)
    app = replay_app(tmp_path, speed=1.0)
    async with app.run_test(size=(200, 55)) as pilot:
        panel = app.query_one(ReplayPanel)
        await wait_for(pilot, lambda: panel.start is not None)
        status = app.query_one(RunStatus)
        timeline = app.query_one(StageTimeline)
        started = time.monotonic()
        await pilot.press("n")
        await pilot.pause(0.1)
        assert "to the next compaction" in str(status.render())
        await wait_for(pilot, lambda: timeline.row_count > 0)
        assert panel.step is not None and time.monotonic() - started < panel.step.index
        await wait_for(pilot, lambda: str(status.render()).startswith("‖ paused"), 2.0)
        held = panel.step.index
        await pilot.pause(1.5)
        assert panel.step.index == held  # held at the compaction
