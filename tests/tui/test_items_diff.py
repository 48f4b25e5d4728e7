"""The Items and Diff tabs, for ctxlab's own run, both sides of a replay, and the watch:
the figures shown are the events', an item opens whole, the diff lists its entries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from core import events as ev
from core.measure import json_chars
from core.sources.watch.source import WatchOptions, WatchSource
from core.views.items import largest
from core.views.turn_diff import diff
from tests.core.sources.replay.conftest import FIXTURES
from tests.tui.conftest import play_to_end, wait_for
from tests.tui.test_event_sources import replay_of
from tests.tui.test_watch_screen import PLACEHOLDER, scripted_client
from tui import panels
from tui.app import AppConfig, CtxlabApp
from tui.screens.items import ItemsScreen
from tui.screens.viewer import Viewer
from tui.screens.watch import WatchScreen
from tui.widgets.items_panel import ItemsPanel, ItemsTable
from tui.widgets.replay_panel import ReplayPanel
from tui.widgets.turn_diff_panel import TurnDiffPanel

pytestmark = pytest.mark.anyio
COMPACTIONS = FIXTURES / "watch-2.1.197" / "compactions.jsonl"


def head(widget: ItemsPanel | TurnDiffPanel) -> str:
    name = "#items-head" if isinstance(widget, ItemsPanel) else "#diff-head"
    return str(widget.query_one(name, Static).render())


async def test_the_demos_largest_items_are_its_last_requests_and_open_whole(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        await pilot.press(panels.keys()["items"])
        await pilot.pause(0.1)
        panel = app.query_one(ItemsPanel)
        sent = app.sent
        assert sent is not None and sent.sent is not None
        side = panel.sides.get("ctxlab")
        assert side is not None  # the last main call's figures, as its event stated them
        assert (side.cur.sent, side.cur.messages, side.cur.chars) == \
            (sent.sent, sent.messages, sent.chars)
        assert f"request {app.calls}" in head(panel)
        assert f"{sent.messages} messages · {sent.chars:,} chars" in head(panel)
        table = panel.query_one(ItemsTable)
        assert app.focused is table and table.row_count > 0
        assert [i.total_chars for i in table.items] == \
            [i.total_chars for i in largest(sent.sent, len(table.items))]
        assert sum(i.total_chars for i in table.items) <= sent.chars
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, Viewer)
        assert app.screen.text == table.items[0].content
        await pilot.press("escape")
        table.move_cursor(row=table.row_count - 1)
        await pilot.press("o")
        await pilot.pause(0.1)
        assert isinstance(app.screen, Viewer) and app.screen.text == table.items[-1].content


async def test_the_demos_diff_is_the_last_two_requests(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        await pilot.press(panels.keys()["diff"])
        await pilot.pause(0.1)
        panel = app.query_one(TurnDiffPanel)
        side = panel.sides.get("ctxlab")
        assert side is not None and side.prev is not None and app.sent is not None
        prev, cur = side.prev, side.cur
        assert cur.sent is app.sent.sent and cur.chars == app.sent.chars
        assert prev.sent and cur.sent
        assert f"messages {prev.messages} → {cur.messages}" in head(panel)
        assert f"chars {prev.chars:,} → {cur.chars:,}" in head(panel)
        shown = panel.shown
        assert shown is not None and shown == diff(list(prev.sent), list(cur.sent))
        body = str(panel.query_one("#diff-body", Static).render())
        assert body.splitlines()[0].startswith(shown.counts)
        assert len(body.splitlines()) >= 1 + len(shown.blocks)
        assert sum(b.chars for b in shown.blocks if b.sign == "+") == \
            sum(json_chars(m) for m in cur.sent[len(cur.sent) - shown.appended:])


async def test_a_replay_shows_both_sides_and_x_switches(tmp_path: Path) -> None:
    app = CtxlabApp(AppConfig(scenario=None, source=replay_of(COMPACTIONS),
                              workspace=tmp_path / "w", theme="ctxlab-dark"))
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        step = app.query_one(ReplayPanel).step
        assert step is not None
        await pilot.press(panels.keys()["items"])
        await pilot.pause(0.1)
        items = app.query_one(ItemsPanel)
        # the first side to send is the recorded agent's: its figures are replay_step's
        assert head(items).startswith("original agent · request")
        assert f"{step.original_messages} messages · {step.original_chars:,} chars" \
            in head(items)
        kinds = {i.kind for i in items.query_one(ItemsTable).items}
        assert "summary" in kinds  # Claude Code's summary, by the agent
        listed = items.query_one(ItemsTable).items
        assert any(i.touched == "Claude Code" for i in listed)
        summary = next(n for n, i in enumerate(listed) if i.kind == "summary")
        items.query_one(ItemsTable).move_cursor(row=summary)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, Viewer)
        assert app.screen.text.startswith("This session is being continued")
        await pilot.press("escape")
        await pilot.pause(0.1)
        await pilot.press("x")
        await pilot.pause(0.1)
        assert head(items).startswith("ctxlab · request")
        assert f"{step.ctxlab_messages} messages · {step.ctxlab_chars:,} chars" in head(items)
        await pilot.press(panels.keys()["diff"])
        await pilot.pause(0.1)
        panel = app.query_one(TurnDiffPanel)
        original = panel.sides.get("original")
        assert original is not None and original.cur is not None
        assert original.cur.messages == step.original_messages
        assert f"messages {original.prev.messages if original.prev else 0} → " \
               f"{step.original_messages}" in head(panel)
        await pilot.press("x")
        await pilot.pause(0.1)
        assert head(panel).startswith("ctxlab · request")
        assert f"→ {step.ctxlab_messages} · chars" in head(panel)


async def test_the_watch_shows_the_diffs_entries_and_the_items(messages_server, tmp_path):
    messages_server.reply_tool_use("bash", {"command": "ls"})
    messages_server.reply_tool_use("bash", {"command": "ls -a"})
    messages_server.reply_text("Two files.")
    source = WatchSource(WatchOptions(upstream=messages_server.url, port=0, root=tmp_path))
    app = CtxlabApp(AppConfig(scenario=None, source=lambda _workspace: source,
                              workspace=tmp_path / "w", theme="ctxlab-dark"))
    async with app.run_test(size=(180, 50)) as pilot:
        await wait_for(pilot, source.ready.is_set)
        await asyncio.to_thread(scripted_client, source.proxy.url)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: len(screen.responses) == 3)
        table = screen.query_one("#watch-requests")
        table.focus()
        table.move_cursor(row=2)  # type: ignore[attr-defined]
        await pilot.pause()
        event = screen.requests[3]
        turn, items = screen.read(3)
        assert turn is not None
        # the one implementation: the event's counts are the diff's
        assert (turn.appended, turn.removed, turn.changed) == \
            (event.appended, event.removed, event.rewritten) == (2, 0, 1)
        detail = str(screen.query_one("#watch-changes", Static).render())
        assert detail.startswith(f"Changes against the request before: {turn.counts}")
        (cleared_entry,) = screen.stages[3][0].ledger  # the client stage's figures
        changed = next(b for b in turn.blocks if b.sign == "~")
        assert (changed.before_chars, changed.chars) == \
            (cleared_entry["chars"], cleared_entry["after_chars"])
        assert f"~ #2   user · tool_result · {changed.before_chars:,} → {changed.chars} chars" \
            in detail
        assert PLACEHOLDER in detail and "+ #3   assistant · tool_use" in detail
        assert "Largest items" in detail
        await pilot.press("i")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ItemsScreen)
        listed = app.screen.query_one(ItemsTable).items
        assert listed == items and listed[0].kind == "tool_result"
        assert listed[0].chars == json_chars("file.txt\n" * 300)
        cleared = next(i for i in listed if i.kind == "cleared")
        assert cleared.touched == "Claude Code" and cleared.tool == "bash"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, Viewer) and app.screen.text == "file.txt\n" * 300
        await pilot.press("escape")
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert isinstance(app.screen, WatchScreen)
        await app.end_session()


async def items_rows(tmp_path: Path, open_first: bool) -> tuple[list[tuple[str, ...]], int]:
    """The Items table after a replay, the tab open before it played or only after; and
    how many events waited in the tab's backlog when it was opened."""
    app = CtxlabApp(AppConfig(scenario=None, source=replay_of(COMPACTIONS), paused=True,
                              workspace=tmp_path / ("open" if open_first else "closed"),
                              theme="ctxlab-dark"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        panel = app.query_one(ItemsPanel)
        if open_first:
            await pilot.press(panels.keys()["items"])
            await pilot.pause(0.1)
        app.source.resume()
        await play_to_end(pilot)
        waiting = len(panel._backlog)
        if not open_first:
            await pilot.press(panels.keys()["items"])
        await wait_for(pilot, lambda: not panel._backlog)
        await pilot.pause(0.1)
        table = panel.query_one(ItemsTable)
        return [tuple(map(str, table.get_row_at(n))) for n in range(table.row_count)], waiting


async def test_a_hidden_items_tab_folds_the_requests_when_it_is_opened(tmp_path: Path) -> None:
    """Closed, the tab keeps the requests' events and folds them, in order, when opened:
    the same rows (sizes, copies, ages) as a tab that followed the replay open."""
    followed, none_waiting = await items_rows(tmp_path, open_first=True)
    caught_up, waiting = await items_rows(tmp_path, open_first=False)
    assert none_waiting == 0 and waiting > 0
    assert followed and caught_up == followed


async def test_a_tab_opened_while_a_batch_is_routed_folds_its_events_at_the_batch_end(
        tmp_path: Path) -> None:
    """A tab finds whether it is shown once per batch. Opened between two of a batch's
    events (a click while the batch yields), it caught up at its Show event, and what came
    after still waited as if it were closed: the batch's end folds it, not the next batch,
    which may never come (the replay ended)."""
    app = CtxlabApp(AppConfig(scenario=None, source=replay_of(COMPACTIONS), paused=True,
                              workspace=tmp_path, theme="ctxlab-dark"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        panel = app.query_one(ItemsPanel)
        seen: list[ev.Event] = []
        app.source.subscribe(seen.append)
        app.source.resume()
        await play_to_end(pilot)
        last = next(e for e in reversed(seen) if isinstance(e, ev.ModelRequest))
        panel._open_batch()
        panel.follow(last)  # closed: it waits
        await pilot.press(panels.keys()["items"])
        await wait_for(pilot, lambda: not panel._backlog and not panel._catching_up)
        panel.follow(last)  # the batch found the tab closed: this one waits too
        assert len(panel._backlog) == 1
        panel._close_batch()
        await wait_for(pilot, lambda: not panel._backlog and not panel._catching_up)
