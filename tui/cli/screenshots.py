"""Regenerate the SVG screenshots in ``screenshots/``: ``python -m tui.cli.screenshots``.

Each screenshot is a *scene*: a fixed scenario, theme and terminal size, driven headless to
a fixed point, so the pictures only change when the workbench does. The same scene
functions drive the snapshot tests, which is what keeps the README's pictures honest.

A replay (``replay``: a Claude Code session copied to a fixed path) and a watched client
(``watch``: :mod:`tui.cli.watch_scene`) are shot the same way, on their own event sources.

Determinism: the workspace path always has the same length (it reaches the system prompt and
so the meter) but is unique to the process, so concurrent runs never share a scene; transcript
names are numbered instead of random, the header shows a fixed
label instead of the path, notifications are cleared and cursors do not blink.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import functools
import itertools
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from core.compact.managers import Manager
from tui.app import AppConfig, CtxlabApp
from tui.cli.watch_scene import canned_watch_app, settle_watch

SIZE = (200, 55)
OUT = Path(__file__).resolve().parents[2] / "screenshots"
SCENE_ROOT_LENGTH = len("/tmp/ctxlab-scenes")  # fixed: the path's length shows in the meter
Scene = Callable[[Pilot[Any]], Awaitable[None]]


async def wait_until(pilot: Pilot[Any], predicate: Callable[[], bool],
                     timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await pilot.pause(0.02)
    raise TimeoutError("the scene did not reach its point in time")


async def settle(pilot: Pilot[Any]) -> None:
    """Let queued events and the 50 ms view refresh land, then drop the toasts; the
    conversation is put at its end explicitly (it follows the stream, but how far it got
    when the last answer's Markdown finished laying out is a race)."""
    from tui.widgets.conversation import Conversation

    await pilot.pause(0.3)
    pilot.app.clear_notifications()
    for conversation in pilot.app.screen_stack[0].query(Conversation):
        conversation.scroll_end(animate=False, immediate=True)
    await pilot.pause(0.1)


def app_of(pilot: Pilot[Any]) -> CtxlabApp:
    assert isinstance(pilot.app, CtxlabApp)
    return pilot.app


async def mid_run(pilot: Pilot[Any], calls: int = 7) -> None:
    """Let ``calls`` model calls through a paused run, then stop there."""
    app = app_of(pilot)
    assert app.source is not None, "a shot of a run"
    app.source.step(calls)
    await wait_until(pilot, lambda: app.calls >= calls)
    await settle(pilot)


async def window_tab(pilot: Pilot[Any]) -> None:
    """The Window tab (key 7) after seven model calls."""
    await mid_run(pilot)
    await pilot.press("7")
    await settle(pilot)


async def items(pilot: Pilot[Any]) -> None:
    """The Items tab mid-run: the largest items of the seventh call, the first selected."""
    from tui import panels

    await mid_run(pilot)
    await pilot.press(panels.keys()["items"])
    await settle(pilot)


async def turn_diff(pilot: Pilot[Any]) -> None:
    """The Diff tab mid-run: what the seventh call changed against the sixth."""
    from tui import panels

    await mid_run(pilot)
    await pilot.press(panels.keys()["diff"])
    await settle(pilot)


async def finished(pilot: Pilot[Any]) -> None:
    app = app_of(pilot)
    assert app.source is not None, "a shot of a run"
    app.source.resume()
    await wait_until(pilot, lambda: app.finished)
    await app.workers.wait_for_complete()
    await settle(pilot)


async def inspector(pilot: Pilot[Any]) -> None:
    """The inspector on the first stage that archived messages (a snip, else any)."""
    from tui.screens.inspector import Inspector

    await finished(pilot)
    app = app_of(pilot)
    from tui.widgets.stage_timeline import StageTimeline

    records = app.query_one(StageTimeline).stages
    record = next((r for r in records if r.event.stage == "snip_compact"), records[0])
    await app.push_screen(Inspector(record, app.workspace, records=list(records),
                                    limits=app.limits()))
    await settle(pilot)


async def editor(pilot: Pilot[Any]) -> None:
    """The built-in memory editor on the first record, cursor at the start."""
    from tui.screens.memory_editor import MemoryEditor
    from tui.widgets.memory_catalog import MemoryCatalog

    await finished(pilot)
    app = app_of(pilot)
    store = app.query_one(MemoryCatalog).store
    assert store is not None
    record = store.records()[0]
    text = (store.root / record.file).read_text(encoding="utf-8")
    await app.push_screen(MemoryEditor(store, record.file, text))
    await settle(pilot)


async def searching(pilot: Pilot[Any]) -> None:
    """The finished demo with the search box open on ``stage:snip`` (History and Stages
    narrowed to the snips, the count beside the box)."""
    from textual.widgets import Input

    await finished(pilot)
    await pilot.press("ctrl+f")
    await pilot.pause(0.1)
    app_of(pilot).query_one("#search-input", Input).value = "stage:snip"
    await settle(pilot)


async def compare(pilot: Pilot[Any]) -> None:
    """The compare screen, every strategy done (the demo behind it stays paused)."""
    from tui.screens.compare import CompareScreen

    app = app_of(pilot)
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    await wait_until(pilot, lambda: screen.done, timeout=60.0)
    await settle(pilot)


async def whatif(pilot: Pilot[Any]) -> None:
    """A replay's what-if screen (the compare key), every strategy done, the second row's
    facts listed."""
    from tui.screens.whatif import WhatIfScreen

    app = app_of(pilot)
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.screen, WhatIfScreen))
    screen = app.screen
    assert isinstance(screen, WhatIfScreen)
    await wait_until(pilot, lambda: screen.done, timeout=120.0)
    screen.query_one("#whatif-table").focus()
    await pilot.press("down", "enter")
    await settle(pilot)


REPLAY_FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "replay" / \
    "claude-code" / "5b1f3c2e-8d4a-4f0e-9a57-2c6d1e0b7a91.jsonl"
# A Claude Code session that auto-compacts and later compacts by hand: the timeline's scene.
COMPACTING_FIXTURE = REPLAY_FIXTURE.parents[1] / "claude-code-2.1.197" / \
    "1292932d-83c2-464e-86ec-21d645a712d5.jsonl"


def replay_scene_app(name: str = "replay", session: Path = REPLAY_FIXTURE) -> CtxlabApp:
    """A paused workbench replaying a Claude Code session copied into the scene root."""
    from core.sources.replay import load_recording
    from core.sources.replay.source import ReplayOptions, ReplaySource

    root = scene_root() / name
    shutil.rmtree(root, ignore_errors=True)
    copy = root / "session" / session.name
    copy.parent.mkdir(parents=True)
    shutil.copy2(session, copy)
    if session.with_suffix("").is_dir():  # its subagents/ folder
        shutil.copytree(session.with_suffix(""), copy.with_suffix(""))

    from core.sources.replay.limits import LimitMode

    def make(workspace: Path) -> ReplaySource:  # the course's limits: ctxlab's stages show
        return ReplaySource(load_recording(copy), ReplayOptions(workdir=workspace,
                                                                limits=LimitMode.COURSE))

    return CtxlabApp(AppConfig(scenario=None, source=make, workspace=root / "work",
                               theme="ctxlab-dark", speed=1000.0, paused=True,
                               display_workspace="~/replay (temporary folder)"))


async def original_compaction(pilot: Pilot[Any]) -> None:
    """Jump (``n``) until the original agent's own compaction is on the Stages panel, with
    its row selected."""
    from tui.widgets.stage_timeline import StageTimeline

    app = app_of(pilot)
    timeline = app.query_one(StageTimeline)

    def theirs() -> list[Any]:
        return [r for r in timeline.stages if r.event.by != Manager.PIPELINE]

    while not theirs() and not app.finished:
        seen = timeline.row_count
        await pilot.press("n")

        def grown(n: int = seen) -> bool:
            return timeline.row_count > n or app.finished

        await wait_until(pilot, grown)
    # The stage row lands mid-step; the rest of that step (the answer after it) follows.
    source = app.source
    await wait_until(pilot, lambda: source is None or not source.seeking or app.finished)
    timeline.move_cursor(row=theirs()[0].index - 1)
    await settle(pilot)


async def timeline(pilot: Pilot[Any]) -> None:
    """The replay played to its end on the Timeline tab, the cursor on request 7 (where
    Claude Code compacted by hand): both sides, ctxlab's trigger, both compactions marked."""
    from tui import panels
    from tui.widgets.timeline import TimelinePanel
    from tui.widgets.timeline_plot import TimelinePlot

    app = app_of(pilot)
    assert app.source is not None, "a shot of a replay"
    app.source.resume()
    await wait_until(pilot, lambda: app.finished)
    await app.workers.wait_for_complete()
    await pilot.press(panels.keys()["timeline"])
    panel = app.query_one(TimelinePanel)
    await wait_until(pilot, lambda: panel.cursor == 9)
    await pilot.press("left", "left")
    plot = panel.query_one(TimelinePlot)
    await wait_until(pilot, lambda: plot.shown is not None and plot.shown.selected == 7)
    await settle(pilot)


@contextmanager
def deterministic() -> Iterator[None]:
    """Numbered transcript names and still cursors, for the duration of a shot."""
    counter = itertools.count(1)
    saved = (uuid.uuid4, Input._toggle_cursor, TextArea._toggle_cursor_blink_visible)
    uuid.uuid4 = lambda: uuid.UUID(int=next(counter))
    Input._toggle_cursor = lambda self: None  # type: ignore[method-assign]  # still, for the shot
    TextArea._toggle_cursor_blink_visible = (  # type: ignore[method-assign]  # still, for the shot
        lambda self: None)
    try:
        yield
    finally:
        uuid.uuid4 = saved[0]
        Input._toggle_cursor = saved[1]  # type: ignore[method-assign]  # the patch undone
        TextArea._toggle_cursor_blink_visible = saved[2]  # type: ignore[method-assign]  # undone


@functools.cache
def scene_root() -> Path:
    """This process's folder for scene workspaces, removed when the process exits.

    ``mkdtemp`` makes it unique (two test runs at once used to share one fixed folder and
    delete each other's workspaces); the prefix is cut so the path has the length every
    snapshot was taken with.
    """
    base = "/tmp/"
    prefix = "ctxl-"
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    if len(str(root)) != SCENE_ROOT_LENGTH:  # mkdtemp's random part is 8 characters
        raise RuntimeError(f"scene root {root} is not {SCENE_ROOT_LENGTH} characters long")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def scene_app(scenario: str, theme: str = "ctxlab-dark", name: str = "scene",
              lang: str = "en") -> CtxlabApp:
    """A paused app on ``scenario`` in a fresh workspace at a path of fixed length."""
    workspace = scene_root() / name
    shutil.rmtree(workspace, ignore_errors=True)
    label = "临时副本" if lang == "zh" else "temporary copy"
    return CtxlabApp(AppConfig(scenario=scenario, workspace=workspace, theme=theme,
                               speed=1000.0, paused=True, lang=lang,
                               display_workspace=f"~/{Path(scenario).stem} ({label})"))


@dataclass(frozen=True)
class Shot:
    theme: str
    scene: Scene
    lang: str = "en"
    suffix: str = ""  # the scenario's translation: refactor-auth → refactor-auth-zh
    size: tuple[int, int] = SIZE


async def welcome(pilot: Pilot[Any]) -> None:
    """The card a demo opens on."""
    from tui.screens.welcome import WelcomeCard

    app = app_of(pilot)
    if not isinstance(app.screen, WelcomeCard):
        app.show_welcome()
    await settle(pilot)


SHOTS: dict[str, Shot] = {
    "workbench": Shot("ctxlab-dark", mid_run),
    "welcome": Shot("ctxlab-dark", welcome),
    "workbench-100x30": Shot("ctxlab-dark", mid_run, size=(100, 30)),
    "inspector": Shot("ctxlab-dark", inspector),
    "memory-editor": Shot("ctxlab-dark", editor),
    "projector": Shot("projector", mid_run),
    "search": Shot("ctxlab-dark", searching),
    "workbench-zh": Shot("ctxlab-dark", mid_run, "zh", "-zh"),
    "compare": Shot("ctxlab-dark", compare),
    "window": Shot("ctxlab-dark", window_tab),
    "replay": Shot("ctxlab-dark", original_compaction),
    "watch": Shot("ctxlab-dark", settle_watch),
    "timeline": Shot("ctxlab-dark", timeline),
    "items": Shot("ctxlab-dark", items),
    "diff": Shot("ctxlab-dark", turn_diff),
    "whatif": Shot("ctxlab-dark", whatif),
}
# Shots of apps other than a scenario's: a recorded session, a watched client.
OTHER_APPS: dict[str, Callable[[], Any]] = {
    "replay": replay_scene_app, "watch": lambda: canned_watch_app(scene_root()),
    "timeline": lambda: replay_scene_app("timeline", COMPACTING_FIXTURE),
    "whatif": lambda: replay_scene_app("whatif", COMPACTING_FIXTURE)}


def translated(scenario: str, suffix: str) -> str:
    """``refactor-auth`` → ``refactor-auth-zh``; a path keeps its folder and extension."""
    path = Path(scenario)
    if not suffix or path.suffix not in (".yaml", ".yml"):
        return scenario + suffix
    return str(path.with_name(path.stem + suffix + path.suffix))


async def shoot(name: str, scenario: str, out: Path) -> Path:
    shot = SHOTS[name]
    theme, scene = shot.theme, shot.scene
    app: Any = scene_app(translated(scenario, shot.suffix), theme, name, shot.lang) \
        if name not in OTHER_APPS else OTHER_APPS[name]()
    with deterministic():
        async with app.run_test(size=shot.size) as pilot:
            await scene(pilot)
            path = out / f"{name}.svg"
            app.save_screenshot(filename=path.name, path=str(out))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tui.cli.screenshots",
                                     description="Regenerate screenshots/*.svg.")
    parser.add_argument("--scenario", default="refactor-auth")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("names", nargs="*", choices=[*SHOTS, []], metavar="NAME",
                        help=f"which shots (default all): {', '.join(SHOTS)}")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names or list(SHOTS):
        path = asyncio.run(shoot(name, args.scenario, args.out))
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
