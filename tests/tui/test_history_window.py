"""Which History entries are laid out while it follows the run (tui/widgets/history_window):
the newest WINDOW; after a burst larger than BURST, only that burst's newest BURST, the rest
of the burst never mounted."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.widgets.history_window import HistoryWindow, parked

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
