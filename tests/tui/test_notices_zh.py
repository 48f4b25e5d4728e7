"""Every notice whole on screen in Chinese, wherever it falls.

The text is read back from what the compositor paints (the screen), not from the toast's
own string: a character lost where a toast crosses a panel's border exists only there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region
from textual.widgets import Static
from textual.widgets._toast import Toast

from core.config import Thresholds
from core.events import Stage
from tests.tui.conftest import TINY_ZH, wait_for
from tui.app import CtxlabApp
from tui.i18n import t
from tui.locales.zh import MESSAGES
from tui.notices import withdraw
from tui.why import stage_meaning, why_fired
from tui.wide_chars import keep_wide_characters_whole

pytestmark = pytest.mark.anyio
TUI = Path(__file__).parents[2] / "tui"
NOTICE_KEYS = re.compile(r'"((?:notice|mem|inspector|tool|panel)\.[\w.]+)"')


@dataclass(frozen=True)
class Notice:
    """One notice as the app shows it: the locale keys it uses, its title and its text."""

    keys: tuple[str, ...]
    message: str
    title: str = ""
    markup: bool = True  # as ``notify`` has it; the auto-pause notice is plain text


def every_notice(limits: Thresholds) -> list[Notice]:
    """Every notice the app passes to ``notify``, in the current language, with the
    parameters a run gives them (a real stage's why, a real path, an exception's text)."""
    stage = Stage(stage="micro_compact", before_chars=14_843, after_chars=12_646,
                  before_messages=11, after_messages=11)
    then = Stage(stage="fit_tool_results", before_chars=12_646, after_chars=9_588,
                 before_messages=11, after_messages=11)  # in the same pause (tui.notices)
    path = "/home/learner/.cache/ctxlab/refactor_auth-3k2j/transcripts/toolu_004_0.txt"
    return [
        Notice(("notice.auto_paused", "notice.auto_paused_title"),
               t("notice.auto_paused", why=why_fired(stage, limits)),
               t("notice.auto_paused_title", stage=stage.stage), markup=False),
        Notice(("notice.auto_paused", "notice.auto_paused_title"),
               t("notice.auto_paused",
                 why=f"{why_fired(stage, limits)}\n{why_fired(then, limits)}"),
               t("notice.auto_paused_title", stage=f"{stage.stage}, {then.stage}"), markup=False),
        Notice(("notice.auto_pause_on",), t("notice.auto_pause_on")),
        Notice(("notice.auto_pause_off",), t("notice.auto_pause_off")),
        Notice(("notice.scenario_error",), "no scenario named 'tiny-zh2' (try: ctxlab list)",
               t("notice.scenario_error")),
        Notice(("notice.agent_stopped",),
               t("notice.agent_stopped", error="RuntimeError: 模型调用失败")),
        Notice(("notice.agent_busy",), t("notice.agent_busy")),
        Notice(("notice.theme",), t("notice.theme", theme="ctxlab-light")),
        Notice(("notice.no_stage",), t("notice.no_stage")),
        Notice(("notice.no_next_stage",), t("notice.no_next_stage")),
        Notice(("notice.no_going_back",), t("notice.no_going_back")),
        Notice(("notice.no_request",), t("notice.no_request", id=12)),  # the watch's g
        Notice(("nav.no_next",), t("nav.no_next", kind="fit_tool_results")),
        Notice(("nav.meaning_title",), stage_meaning(stage),
               t("nav.meaning_title", stage=stage.stage)),
        Notice(("notice.limits",), t("notice.limits", limit=12_000, target=9_600)),
        Notice(("notice.error_title",), "HTTP 400: prompt is too long",
               t("notice.error_title", kind="api")),
        Notice(("notice.finished", "notice.finished_title"), t("notice.finished"),
               t("notice.finished_title")),
        Notice(("notice.finished_source",),
               t("notice.finished_source", kind=t("source.replay")), t("notice.finished_title")),
        Notice(("notice.failed", "notice.failed_title"), t("notice.failed"),
               t("notice.failed_title")),
        Notice(("notice.failed_source",),
               t("notice.failed_source", kind=t("source.replay")), t("notice.failed_title")),
        Notice(("notice.breaks_on",),
               t("notice.breaks_on", switches="pair-protection, summary-budget")),
        Notice(("notice.breaks_off",), t("notice.breaks_off")),
        Notice(("notice.compare_live",), t("notice.compare_live")),
        Notice(("notice.workspace_copied",), path, t("notice.workspace_copied")),
        Notice(("notice.zoom_nothing",), t("notice.zoom_nothing")),
        Notice(("notice.body_gone",), t("notice.body_gone", path=path)),  # the watch's b
        Notice(("notice.body_gone_unrecorded",), t("notice.body_gone_unrecorded")),
        Notice(("mem.not_watched",), t("mem.not_watched", error="权限不足")),
        Notice(("mem.reloaded", "panel.memory"), t("mem.reloaded", files="缩进.md, MEMORY.md"),
               t("panel.memory")),
        Notice(("mem.cannot_read",), t("mem.cannot_read", file="缩进.md", error="权限不足")),
        Notice(("mem.saved",), t("mem.saved", file="缩进.md")),
        Notice(("mem.deleted",), t("mem.deleted", file="缩进.md")),
        Notice(("inspector.no_more",), t("inspector.no_more")),
        Notice(("inspector.export_failed",), t("inspector.export_failed", error="磁盘已满")),
        Notice(("inspector.exported",), path, t("inspector.exported")),
        Notice(("tool.not_yet",), t("tool.not_yet")),
        Notice(("notice.timeline_seek",), t("notice.timeline_seek", n=37)),  # Enter there
        Notice(("notice.timeline_shown",),
               t("notice.timeline_shown", n=12, panels=t("panel.model"))),
        Notice(("notice.timeline_shown_none",), t("notice.timeline_shown_none", n=12)),
    ]


def keys_given_to_notify() -> set[str]:
    """The locale keys written inside a ``notify(…)`` call anywhere in tui/."""
    keys: set[str] = set()
    for path in TUI.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\bnotify\(", text):
            depth, end = 1, match.end()
            while depth and end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            keys |= set(NOTICE_KEYS.findall(text[match.end():end]))
    return keys


def on_screen(app: App[object], region: Region) -> str:
    """The characters the screen shows inside ``region``, row by row."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.crop(region.x, region.right).text
                     for strip in strips[region.y:region.bottom])


def squeeze(text: str) -> str:
    """Text without its whitespace: a toast wraps lines at spaces."""
    return "".join(text.split())


def test_the_list_has_every_notice() -> None:
    listed = {key for notice in every_notice(Thresholds()) for key in notice.keys}
    shown = keys_given_to_notify() | {key for key in MESSAGES if key.startswith("notice.")}
    assert shown <= listed, sorted(shown - listed)


@pytest.mark.parametrize("size", [(160, 48), (142, 34), (80, 24)])
async def test_every_notice_is_whole_on_screen_in_chinese(
        make_app: Callable[..., CtxlabApp], size: tuple[int, int]) -> None:
    app = make_app(scenario=TINY_ZH, lang="zh", paused=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause(0.3)
        for notice in every_notice(app.limits()):
            for old in list(app._notifications):
                withdraw(app, old)
            await wait_for(pilot, lambda: not app.screen.query(Toast))
            app.notify(notice.message, title=notice.title, markup=notice.markup)
            await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
            await pilot.pause(0.1)
            toast = app.screen.query_one(Toast)
            shown = on_screen(app, toast.content_region)
            assert squeeze(shown) == squeeze(notice.title + notice.message), (notice.keys, shown)


class Borders(App[None]):
    """Two bordered boxes side by side, a toast across the border between them."""

    CSS = """Horizontal { height: 1fr; } Static { height: 1fr; border: round grey; }
    #left { width: 3fr; } #right { width: 1fr; }"""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Static("左边", id="left")
            yield Static("右边", id="right")


@pytest.mark.parametrize("width", [81, 82, 83, 84])
async def test_a_chinese_toast_across_a_border_keeps_every_character(width: int) -> None:
    keep_wide_characters_whole()
    app = Borders()
    text = "已暂停：第一次触发 · 空格继续 · 命令面板：关闭自动暂停 · 字符"
    async with app.run_test(size=(width, 12), notifications=True) as pilot:
        app.notify(text, markup=False)
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.1)
        toast = app.screen.query_one(Toast)
        assert squeeze(on_screen(app, toast.content_region)) == squeeze(text)


def test_the_wide_character_copy_matches_the_installed_textual() -> None:
    """The workaround replaces a private Textual method with a modified copy: a Textual whose
    method changed keeps its own (and this says why the tests above then fail)."""
    from textual._compositor import Compositor

    from tui import wide_chars

    assert wide_chars.source_digest(wide_chars._ORIGINAL) == wide_chars.WRITTEN_FOR, (
        "Textual's Compositor._render_chops changed: compare tui/wide_chars.py's copy with it")
    keep_wide_characters_whole()
    assert Compositor._render_chops is wide_chars._render_chops
