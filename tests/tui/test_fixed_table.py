"""A table of fixed-width columns skips DataTable's per-row measures and still sizes and
draws its rows (tui/widgets/fixed_table.py)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tui.widgets.fixed_table import FixedWidthTable

pytestmark = pytest.mark.anyio


def test_the_hook_it_overrides_is_datatables() -> None:
    """A Textual that renamed the method would leave the override unused: say so."""
    assert "_update_dimensions" in vars(DataTable)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield FixedWidthTable[str](id="fixed")
        yield DataTable[str](id="plain")


async def test_rows_are_sized_and_drawn_without_being_measured() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        tables = [app.query_one("#fixed", FixedWidthTable), app.query_one("#plain", DataTable)]
        for table in tables:
            table.add_column("n", key="n", width=4)
            table.add_column("name", key="name", width=20)
            for n in range(50):
                table.add_row(str(n), f"row {n} with a long name past its column", key=str(n))
        await pilot.pause(0.1)
        fixed, plain = tables
        assert fixed.virtual_size == plain.virtual_size  # 50 rows, the fixed widths
        widths = [t.columns[next(iter(t.columns))].content_width for t in tables]
        assert widths == [1, 2]  # the label's "n" alone: the rows' "49" was not measured
        assert [str(s.text) for s in fixed.render_lines(fixed.region.reset_offset)] == \
            [str(s.text) for s in plain.render_lines(plain.region.reset_offset)]
