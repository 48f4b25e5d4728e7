"""A table of fixed-width columns skips DataTable's per-row measures and still sizes and
draws its rows (tui/widgets/fixed_table.py)."""

from __future__ import annotations

import unicodedata
from typing import Any, cast

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.content import Content
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, DuplicateKey, RowKey

from tui.widgets.columns import set_widths
from tui.widgets.fixed_table import FixedWidthTable

pytestmark = pytest.mark.anyio


def test_the_hooks_it_overrides_are_datatables() -> None:
    """A Textual that renamed a method would leave the override unused: say so."""
    for name in ("_update_dimensions", "_render_line_in_row", "_clear_caches",
                 "_row_render_cache", "_update_count", "_row_locations", "_render_cell",
                 "_render_line", "render_line", "_get_row_style", "_get_styles_to_render_cell",
                 "_cell_render_cache", "_get_row_renderables", "_get_offsets", "_data",
                 "_new_rows", "_highlight_cursor", "_require_update_dimensions",
                 "ordered_rows", "_y_offsets", "_get_row_region", "_total_row_height",
                 "_offset_cache"):
        assert name in vars(DataTable) or name in DataTable().__dict__, name


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


def drawn(table: DataTable[str]) -> list[list[tuple[str, object]]]:
    """Every visible line as segments: text and style, what the screen gets."""
    return [[(segment.text, segment.style) for segment in strip]
            for strip in table.render_lines(table.region.reset_offset)]


async def test_a_kept_row_is_drawn_again_whenever_what_it_shows_changed() -> None:
    """After each step the table draws what it draws with every cache emptied: rows added,
    the cursor and the hover moved, a cell changed, a column widened, a column's label
    replaced as rows came, a row removed and its
    key reused, a sort, a clear with the keys reused, the focus, the theme and the cursor's
    kind changed, a column replaced by another as wide."""
    app = Host()
    async with app.run_test(size=(60, 16)) as pilot:
        table = app.query_one("#fixed", FixedWidthTable)
        table.styles.height = 8
        table.cursor_type = "row"
        table.zebra_stripes = True
        table.add_column("n", key="n", width=3)
        table.add_column("name", key="name", width=12)
        kept_before = 0

        async def same() -> None:
            nonlocal kept_before
            await pilot.pause()
            shown = drawn(table)
            kept_before = max(kept_before, len(table._kept_rows))
            table._clear_caches()
            assert shown == drawn(table)

        for n in range(5):
            table.add_row(str(n), f"row {n}", key=str(n))
        await same()
        for row in (1, 3, 0):
            table.move_cursor(row=row)
            await same()
        table.hover_coordinate = Coordinate(2, 1)
        await same()
        table.add_row("5", "row 5", key="5")
        await same()
        table.update_cell("2", "name", "changed")
        await same()
        set_widths(table, {"name": 16})
        await same()
        table.columns[ColumnKey("n")].label = Text("N")  # a label replaced as rows come
        table.add_row("6", "row 6", key="6")  # (the Memory panel's way)
        await same()
        table.remove_row("6")
        await same()
        table.remove_row("5")  # the last: the new row takes its key and its place
        table.add_row("5", "back again", key="5")
        await same()
        table.sort("name", reverse=True)
        await same()
        table.clear()
        for n in range(3):
            table.add_row(str(n), f"second {n}", key=str(n))
        await same()
        table.focus()
        await same()
        app.set_focus(None)
        await same()
        app.theme = "textual-light"
        await same()
        table.cursor_type = "column"
        table.move_cursor(row=1, column=1)
        await same()
        table.cursor_type = "row"
        await same()
        table.remove_column(ColumnKey("name"))  # another column of the same width
        table.add_column("other", key="other", width=16, default="new")
        await same()
        assert kept_before  # the rows were kept, or the test compares nothing


CELLS = ["plain", "[bold]markup[/] after", "漢字の列が切れる所",
         "a long cell cut at its column's edge", "", "x", "[reverse]spans[/reverse] [italic]two[/]",
         "tab\tin", "two\nlines", "ends in 漢", "1,234→567 arrows cut at the edge",
         ":warning: an emoji code", "  spaced  ",
         unicodedata.normalize("NFD", "가나다라마.txt")]  # wide and zero-width: as many cells


async def test_a_cell_is_drawn_as_datatable_draws_it() -> None:
    """The short way a one-line cell is rendered gives the segments DataTable's own way
    gives (text, style, the row and column the mouse reads): markup, wide characters cut at
    the edge, empty cells, a row under the cursor and the hover, zebra stripes, focus, each
    kind of cursor."""
    app = Host()
    async with app.run_test(size=(100, 20)) as pilot:
        tables = [app.query_one("#fixed", FixedWidthTable), app.query_one("#plain", DataTable)]
        for table in tables:
            table.styles.height = 9  # each as tall: the same rows shown
            table.cursor_type = "row"
            table.zebra_stripes = True
            for n, width in enumerate((3, 7, 12, 1)):
                table.add_column(f"c{n}", key=f"c{n}", width=width)
            for n, cell in enumerate(CELLS):
                table.add_row(str(n), cell, cell, Content.from_markup(f"[b]{n}[/] {cell}"),
                              key=str(n))
            table.move_cursor(row=2)
            table.hover_coordinate = Coordinate(4, 1)
        fixed = tables[0]
        for kind in ("row", "cell", "column"):  # the filler after the cells: each its way
            for focused in (False, True):  # each in the same state: a focused table is tinted
                views = []
                for table in tables:
                    table.cursor_type = kind
                    app.set_focus(table if focused else None)
                    await pilot.pause()
                    views.append(drawn(table))
                    if table is fixed:
                        fixed._clear_caches()
                        assert drawn(fixed) == views[0]
                assert views[0] == views[1], (kind, focused)


async def test_a_scrolled_table_is_drawn_as_datatable_draws_it() -> None:
    """Scrolled down and right, with fixed rows and columns, cell padding of 0 and 2, and
    a cell whose text may overflow: the same segments as DataTable's."""
    app = Host()
    async with app.run_test(size=(100, 24)) as pilot:
        app.set_focus(None)
        tables = [app.query_one("#fixed", FixedWidthTable), app.query_one("#plain", DataTable)]
        for table in tables:
            table.styles.height = 10
            table.styles.width = 24
            table.cursor_type = "row"
            for n, width in enumerate((3, 9, 12, 8)):
                table.add_column(f"c{n}", key=f"c{n}", width=width)
            for n in range(30):
                cell = CELLS[n % len(CELLS)]
                table.add_row(str(n), cell, Text(f"{n} {cell} past the edge", overflow="ignore"),
                              cell, key=str(n))
            table.move_cursor(row=12)
        steps: list[tuple[str, object]] = [
            ("scroll", (9, 0)), ("scroll", (0, 7)), ("scroll", (5, 11)),
            ("fixed_columns", 1), ("fixed_rows", 2), ("cell_padding", 0), ("cell_padding", 2)]
        for what, value in steps:
            for table in tables:
                if what == "scroll":
                    x, y = cast("tuple[int, int]", value)
                    table.scroll_to(x=x, y=y, animate=False)
                else:
                    setattr(table, what, value)
            await pilot.pause()
            assert tables[0].scroll_offset == tables[1].scroll_offset, what
            assert drawn(tables[0]) == drawn(tables[1]), (what, value)


class Pair(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield FixedWidthTable[str](id="one-by-one", cursor_type="row")
        yield FixedWidthTable[str](id="together", cursor_type="row")

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self.highlighted.append(message.data_table.id)


async def test_rows_added_together_are_the_rows_added_one_by_one() -> None:
    """``add_keyed_rows`` leaves the table as ``add_row`` per row does: the rows, their
    keys and places, what is drawn, the cursor, the first row highlighted; a key taken
    or too many cells are refused as ``add_row`` refuses them."""
    app = Pair()
    async with app.run_test(size=(60, 30)) as pilot:
        app.set_focus(None)  # a focused table is tinted
        one, together = app.query_one("#one-by-one", FixedWidthTable), \
            app.query_one("#together", FixedWidthTable)
        for table in (one, together):
            table.styles.height = 12
            table.add_column("n", key="n", width=3)
            table.add_column("name", key="name", width=12)
            table.add_column("note", key="note", width=6)
        batches: list[list[tuple[str, tuple[str, ...]]]] = [
            [(str(n), (str(n), f"row {n}")) for n in range(4)],
                   [(str(n), (str(n), f"row {n}", "x")) for n in range(4, 30)]]
        for batch in batches:
            for key, cells in batch:
                one.add_row(*cells, key=key)
            assert together.add_keyed_rows(batch) == [RowKey(key) for key, _ in batch]
            await pilot.pause()
            assert [one.get_row_at(n) for n in range(one.row_count)] == \
                [together.get_row_at(n) for n in range(together.row_count)]
            assert [one.get_row_index(k) for k in one.rows] == \
                [together.get_row_index(k) for k in together.rows]
            assert one.cursor_coordinate == together.cursor_coordinate
            assert one.virtual_size == together.virtual_size and drawn(one) == drawn(together)
        assert sorted(map(str, app.highlighted)) == ["one-by-one", "together"]
        for refused, error in (([("30", ("30",)), ("3", ("3",))], DuplicateKey),
                               ([("30", ("30",)), ("30", ("again",))], DuplicateKey),
                               ([("30", ("30",)), ("31", ("a", "b", "c", "d"))], ValueError)):
            with pytest.raises(error):
                together.add_keyed_rows(refused)
            assert together.row_count == 30 and "30" not in together.rows  # none added


async def test_where_a_row_is_is_what_datatable_works_out() -> None:
    """Rows of one line: the rows in order, each line's row, a row's region and the
    virtual size are DataTable's own after every kind of change — rows appended one by one
    and together, removed, sorted, reordered as the Transcripts panel puts newer files on
    top, cleared — and a taller row hands the table back to DataTable's ways."""
    from textual._two_way_dict import TwoWayDict

    async def same(table: FixedWidthTable[str], what: str) -> None:
        await pilot.pause()  # the virtual size is worked out on the next idle
        ordered = DataTable.ordered_rows.fget(table)  # type: ignore[attr-defined]
        assert table.ordered_rows == ordered, what
        assert [table._y_offsets[y] for y in range(len(table._y_offsets))] == \
            DataTable._y_offsets.fget(table), what  # type: ignore[attr-defined]
        assert table._total_row_height == sum(row.height for row in ordered), what
        for index in range(-1, table.row_count + 1):
            assert table._get_row_region(index) == DataTable._get_row_region(table, index)
        assert table.virtual_size == table.virtual_size.with_height(
            table.header_height + sum(row.height for row in ordered)), what

    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one("#fixed", FixedWidthTable)
        table.add_column("n", key="n", width=4)
        table.add_column("name", key="name", width=20)
        await same(table, "empty")
        for n in range(5):
            table.add_row(str(n), f"row {n}", key=str(n))
        await same(table, "added one by one")
        table.add_keyed_rows([(str(n), (str(n), f"row {n}")) for n in range(5, 40)])
        await same(table, "added together")
        assert not table._tall  # the shortcuts, not DataTable's walks, were compared
        table.remove_row("3")
        await same(table, "a row removed")
        table.add_keyed_rows([("40", ("40", "row 40"))])
        table.sort("name", reverse=True)
        await same(table, "sorted")
        order = ["41", *(str(row.key.value) for row in table.ordered_rows)]
        table.add_keyed_rows([("41", ("41", "newest"))])
        table._row_locations = TwoWayDict({RowKey(k): n for n, k in enumerate(order)})
        table._update_count += 1
        await same(table, "a newer row put on top")
        assert table.get_row_at(0) == ["41", "newest"]
        table.add_row("42", "two lines\nof text", key="42", height=2)
        await same(table, "a taller row")
        assert table._tall
        table.clear()
        await same(table, "cleared")
        table.add_keyed_rows([(str(n), (str(n), f"again {n}")) for n in range(3)])
        await same(table, "added after the clear")


async def test_the_header_is_drawn_once_while_rows_come(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows added change no label: the header drawn before is kept (a fast replay adds rows
    at every routing, and drawing the header each time cost as much as a screenful)."""
    app = Host()
    async with app.run_test(size=(60, 16)) as pilot:
        table = app.query_one("#fixed", FixedWidthTable)
        table.add_column("n", key="n", width=3)
        for n in range(3):
            table.add_row(str(n), key=str(n))
        await pilot.pause()
        drawn(table)
        rows: list[RowKey] = []  # the rows drawn, the short way or DataTable's

        def spying(render: Any) -> Any:
            def spy(self: DataTable[str], row_key: RowKey, *args: object) -> object:
                drawn_row = render(self, row_key, *args)
                if drawn_row is not None:
                    rows.append(row_key)
                return drawn_row
            return spy

        for cls, name in ((DataTable, "_render_line_in_row"), (FixedWidthTable, "_body_row")):
            monkeypatch.setattr(cls, name, spying(getattr(cls, name)))
        table.add_row("3", key="3")
        await pilot.pause()
        drawn(table)
        assert rows == [RowKey("3")]
