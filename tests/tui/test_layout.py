"""The layout adapts to the terminal and never hides a panel silently; labels say the truth."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Header, Static

from tests.tui.conftest import play_to_end, wait_for
from tui import panels
from tui.app import CtxlabApp
from tui.app_panels import PanelStrip
from tui.i18n import t
from tui.why import stage_hint
from tui.widgets.context_meter import ContextMeter, spark_rows
from tui.widgets.memory_catalog import MemoryCatalog
from tui.widgets.stage_timeline import StageTimeline

pytestmark = pytest.mark.anyio


RIGHT_PANELS = [panel.name for panel in panels.in_strip()]


def shown(app: CtxlabApp) -> list[str]:
    return [panel.name for panel in panels.in_strip() if app.panel_widget(panel.name).display
            and (panel.place != "bottom" or app.query_one("#bottom-row").display)]


async def test_narrow_terminal_shows_one_panel_named_in_a_strip_and_keys_switch(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await play_to_end(pilot)
        assert app.narrow and shown(app) == ["context"]
        strip = str(app.query_one(PanelStrip).render())
        for name in RIGHT_PANELS:  # the hidden ones are named, with their keys
            assert t(f"panel.{name}") in strip
        await pilot.press("6")
        await pilot.pause(0.1)
        assert shown(app) == ["memory"]
        assert app.focused is app.query_one(MemoryCatalog).query_one(DataTable)
        await pilot.press("z")  # maximise the focused panel, and back
        await pilot.pause(0.1)
        assert app.screen.maximized is app.query_one(MemoryCatalog)
        await pilot.press("z")
        await pilot.pause(0.1)
        assert app.screen.maximized is None
        await pilot.press("4")
        await pilot.pause(0.1)
        assert shown(app) == ["stages"] and app.focused is app.query_one(StageTimeline)
        # The meter's bar is drawn to the panel's width: it never wraps.
        meter = app.query_one(ContextMeter)
        await pilot.press("3")
        await pilot.pause(0.1)
        bar = str(meter.query_one("#meter-figures", Static).render()).splitlines()[0]
        assert len(bar) <= meter.scrollable_content_region.width
        app.screen.set_focus(None)  # leave the panel keys to the app, whatever is focused


async def test_wide_terminal_shows_every_panel_and_whole_stage_hints(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        assert not app.narrow and shown(app) == list(RIGHT_PANELS)
        assert not app.query_one(PanelStrip).display
        timeline = app.query_one(StageTimeline)
        width = timeline.columns[next(k for k in timeline.columns if k.value == "hint")].width
        longest = max(len(stage_hint(r.event)) for r in timeline.records.values())
        assert width >= longest
        # The breakdown keeps every row (thirteen categories) in two columns.
        text = str(app.query_one("#meter-breakdown", Static).render())
        assert t("cat.structure") in text and t("cat.tools") in text


async def test_breakdown_keeps_its_last_rows_in_a_narrow_panel(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(90, 40)) as pilot:
        await play_to_end(pilot)
        meter = app.query_one(ContextMeter)
        lines = str(meter.query_one("#meter-breakdown", Static).render()).splitlines()
        assert any(t("cat.structure") in line for line in lines)
        assert any(t("cat.tools") in line for line in lines)
        assert all(len(line) <= meter.scrollable_content_region.width for line in lines[1:])


async def test_header_fits_at_80_columns_and_the_full_path_is_one_key_away(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app(display_workspace=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        assert len(app.title) + 3 + len(app.sub_title) <= 80 - 8
        assert str(tmp_path / "ws") in str(app.query_one(Header).tooltip)
        # A folder the user chose under the temp dir is not "temporary".
        assert t("header.temporary_short") not in app.sub_title
        assert "ws" in app.sub_title
        await pilot.press("w")
        await pilot.pause(0.1)
        assert any(str(tmp_path / "ws") in str(n.message) for n in app._notifications)


async def test_the_selected_memory_record_gets_a_detail_line(
        make_app: Callable[..., CtxlabApp], tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        (tmp_path / "ws" / ".memory" / "broken.md").write_text("no frontmatter here\n")
        panel = app.query_one(MemoryCatalog)
        table = panel.query_one(DataTable)
        await wait_for(pilot, lambda: "!broken.md" in {str(k.value) for k in table.rows})
        table.focus()
        table.move_cursor(row=table.get_row_index("!broken.md"))
        await pilot.pause(0.1)
        reason = next(b.reason for b in panel.store.invalid() if b.file == "broken.md")
        detail = str(panel.query_one("#memory-detail", Static).render())
        assert "broken.md" in detail and " ".join(reason.split()) in " ".join(detail.split())
        table.move_cursor(row=table.get_row_index("indentation.md"))
        await pilot.pause(0.1)
        record = next(r for r in panel.store.records() if r.file == "indentation.md")
        detail = str(panel.query_one("#memory-detail", Static).render())
        assert record.description in " ".join(detail.split())


async def test_the_scripted_meter_says_scripted_and_the_sparkline_has_a_fixed_scale(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 55)) as pilot:
        await play_to_end(pilot)
        figures = str(app.query_one("#meter-figures", Static).render())
        assert t("meter.no_usage_scripted") in figures
        spark = str(app.query_one("#meter-spark", Static).render())
        assert "25,000" in spark or f"{int(app.limits().context_limit * 1.25):,}" in spark


def test_one_small_call_does_not_fill_the_sparkline() -> None:
    top, bottom = spark_rows([100], 25_000, 10).plain.splitlines()
    assert top.strip() == "" and bottom.strip() in ("", "▁")
    top, bottom = spark_rows([100, 25_000, 40_000], 25_000, 10).plain.splitlines()
    assert top[1:] == "██" and bottom[1:] == "██"
