"""Which History items are laid out while it follows the run (tui/widgets/history_window):
the newest WINDOW; after a burst larger than BURST, only that burst's newest BURST, the rest
of the burst never mounted."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.widgets.history_window import HistoryWindow, Later, built, parked

pytestmark = pytest.mark.anyio


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="view")


def items(n: int, start: int = 0) -> list[Static]:
    return [Static(f"item {k}") for k in range(start, start + n)]


async def test_a_large_burst_shows_its_newest_and_never_mounts_the_rest() -> None:
    app = Host()
    async with app.run_test() as pilot:
        view = app.query_one("#view", VerticalScroll)
        window = HistoryWindow(view, limit=400, window=100, page=100, burst=40)
        first = items(10)
        await window.add(first, following=True)
        await pilot.pause()
        assert [w for w in view.children if w.display] == first  # a small burst: all

        burst = items(60, start=10)
        await window.add(burst, following=True)
        await pilot.pause()
        shown = [w for w in view.children if w.display]
        assert shown == burst[-40:]
        assert all(parked(w) for w in first + burst[:20])
        assert not any(w.parent for w in burst[:20])  # the burst's older ones: unmounted

        more = items(5, start=70)
        await window.add(more, following=True)
        await pilot.pause()
        assert [w for w in view.children if w.display] == burst[-40:] + more

        assert window.bring_back(lambda w: True) == first + burst[:20]  # going back: all
        await pilot.pause()
        assert [w for w in view.children if w.display] == window.entries


async def test_an_item_parked_at_once_is_built_only_when_the_reader_goes_back_to_it() -> None:
    """A burst's older items given as :class:`Later` are never built while they stay in the
    parked past; a change made before they are built (a tool call's result) reaches them
    when they are; going back builds and mounts them in order."""
    app = Host()
    async with app.run_test() as pilot:
        view = app.query_one("#view", VerticalScroll)
        window = HistoryWindow(view, limit=400, window=100, page=100, burst=40)
        made: list[int] = []

        def later(k: int) -> Later[Static]:
            def make() -> Static:
                made.append(k)
                return Static(f"item {k}")
            return Later(make)

        burst = [later(k) for k in range(60)]
        burst[5].apply(lambda w: w.update("item 5, its result in"))
        await window.add(list(burst), following=True)
        await pilot.pause()
        assert made == list(range(20, 60))  # the newest 40, shown; the rest not built
        assert all(parked(item) and built(item) is None for item in burst[:20])
        assert window.first_shown() == 20

        back = window.bring_back(lambda w: True)
        await pilot.pause()
        assert made == list(range(20, 60)) + list(range(20))
        assert back == [built(item) for item in burst[:20]]
        assert list(view.children) == window.widgets()  # every item, in order
        assert str(back[5].render()) == "item 5, its result in"
        burst[6].apply(lambda w: w.update("item 6 changed"))  # built: changed at once
        assert str(back[6].render()) == "item 6 changed"
