"""The projector theme's thick, labelled target and trigger marks on the Context meter, and
the mark style other views reuse."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rich.cells import cell_len
from textual.widgets import Static

from core.config import Thresholds
from tests.tui.conftest import play_to_end
from tui.app import CtxlabApp
from tui.i18n import set_language, t
from tui.themes import load_themes
from tui.widgets.context_meter import mark_columns, meter_bar
from tui.widgets.meter_marks import HEAVY, LIGHT, label_rows, mark_style

pytestmark = pytest.mark.anyio


def test_the_projector_theme_asks_for_heavy_marks_and_the_others_do_not() -> None:
    themes = load_themes()
    assert mark_style(themes["projector"].variables) is HEAVY
    assert mark_style(themes["ctxlab-dark"].variables) is LIGHT
    assert mark_style(themes["ctxlab-light"].variables) is LIGHT


def test_each_label_points_at_its_mark_column() -> None:
    limits = Thresholds(context_limit=12_000)
    bar = meter_bar(3_000, limits, 60, HEAVY).plain.split("\n")
    _, target_at, trigger_at = mark_columns(3_000, limits, 60)
    assert bar[0][target_at] == "╏" and bar[0][trigger_at] == "┃"
    labels = bar[1:]
    target = next(row for row in labels if t("marks.target", n=limits.target) in row)
    trigger = next(row for row in labels if t("marks.trigger", n=12_000) in row)
    assert target[target_at] in "┗┛" and trigger[trigger_at] in "┗┛"
    assert meter_bar(3_000, limits, 60, LIGHT).plain.count("\n") == 0  # no label row


def test_chinese_labels_are_placed_by_cells() -> None:
    set_language("zh")
    rows = label_rows(30, 50, 9_600, 12_000, 60, HEAVY)
    assert rows and all(cell_len(r.plain) <= 60 for r in rows)
    target = next(r.plain for r in rows if "目标 9,600" in r.plain)
    assert cell_len(target.split("┛")[0] + "┛") == 31  # the target's label ends at column 30
    assert cell_len(target) == 51  # and the trigger's at column 50, on the same row


@pytest.mark.parametrize(("theme", "labelled"), [("projector", True), ("ctxlab-dark", False)])
async def test_the_meter_marks_follow_the_theme(make_app: Callable[..., CtxlabApp],
                                                theme: str, labelled: bool) -> None:
    app = make_app(theme=theme)
    async with app.run_test(size=(160, 48)) as pilot:
        await play_to_end(pilot)
        limits = app.limits()
        text = str(app.query_one("#meter-figures", Static).render())
        label_lines = [line for line in text.splitlines() if "┛" in line or "┗" in line]
        labels = (t("marks.target", n=limits.target),
                  t("marks.trigger", n=limits.context_limit))
        assert all(any(label in line for line in label_lines) for label in labels) is labelled
        assert ("┃" in text and "╏" in text) is labelled
        await pilot.press("t")  # projector → dark, dark → light: the marks follow at once
        await pilot.pause(0.1)
        text = str(app.query_one("#meter-figures", Static).render())
        assert "┛" not in text and "┃" not in text
