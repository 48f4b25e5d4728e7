"""The Chinese workbench: complete catalogs, the locale, and every panel title in Chinese."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Tab

from tests.tui.conftest import TINY_ZH, play_to_end
from tui.app import CtxlabApp
from tui.commands import CtxlabCommands
from tui.i18n import detect_language, set_language, t
from tui.locales import CATALOGS
from tui.widgets.stage_timeline import StageTimeline

TUI = Path(__file__).resolve().parents[2] / "tui"
CJK = re.compile(r"[\u4e00-\u9fff]")
# t("id"), t('id'), and message ids written as binding descriptions or catalog references.
LITERAL_KEY = re.compile(r"""\bt\(\s*["']([A-Za-z0-9_.+\-]+)["']""")
BINDING_KEY = re.compile(r"""Binding\([^)]*?["']((?:key)\.[a-z_]+)["']""", re.S)


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_message_id_exists_in_both_languages_with_the_same_fields() -> None:
    en, zh = CATALOGS["en"], CATALOGS["zh"]
    assert set(en) - set(zh) == set(), "missing in zh"
    assert set(zh) - set(en) == set(), "missing in en"
    for key in en:
        assert fields(en[key]) == fields(zh[key]), key
        assert zh[key].strip(), key


def test_every_id_the_code_uses_is_in_the_catalog() -> None:
    used: set[str] = set()
    for path in TUI.rglob("*.py"):
        if "locales" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        used |= set(LITERAL_KEY.findall(text)) | set(BINDING_KEY.findall(text))
    assert len(used) > 150
    assert sorted(k for k in used if k not in CATALOGS["en"]) == []


def test_stage_hints_and_break_texts_cover_every_stage_and_switch() -> None:
    from core.compact.stages import stage_names
    from core.config import BREAK_SWITCHES
    from tui.why import HINT, stage_key

    for stage in stage_names():
        assert stage_key(HINT, stage) in CATALOGS["en"], stage
    for switch in BREAK_SWITCHES:
        assert {f"break.{switch}", f"break.{switch}.off"} <= set(CATALOGS["en"]), switch


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh"),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),  # LC_ALL wins, as in POSIX
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_GB.UTF-8"}, "zh"),
    ({"LANG": "", "LC_ALL": ""}, "en"),
])
def test_language_comes_from_the_locale(environ: dict[str, str], expected: str) -> None:
    assert detect_language(environ) == expected


def test_lookups_fall_back_and_format() -> None:
    try:
        set_language("zh")
        assert t("panel.stages") == "压缩阶段"
        assert t("stages.subtitle", n=3, saved=12345) == "3 个阶段 · 共移出 12,345 字符"
        assert t("no.such.id") == "no.such.id"
        with pytest.raises(ValueError, match="unknown language"):
            set_language("fr")
    finally:
        set_language("en")
    assert t("panel.stages") == "Stages"


@pytest.mark.anyio
async def test_with_lang_zh_every_visible_title_label_and_key_is_chinese(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=TINY_ZH, lang="zh", paused=True)
    async with app.run_test(size=(200, 55)) as pilot:
        app.source.step()
        await pilot.pause(0.4)
        panels = {w.id: str(w.border_title) for w in app.screen.query("*")
                  if w.border_title and w.display}
        assert panels == {"context": "上下文", "stages": "压缩阶段",
                          "transcripts": "归档", "memory": "记忆"}
        assert [str(tab.label) for tab in app.query(Tab)] == [
            "对话历史", "模型看到的内容", "窗口", "时间线", "最大条目", "轮次差异"]
        assert "提供方" in app.sub_title and "工作区" in app.sub_title
        assert CJK.search(str(app.query_one("#status").render()))
        # The footer: every shown binding (the record editor's $EDITOR and MEMORY.md are
        # names, not prose).
        shown = [b.binding.description for b in app.screen.active_bindings.values()
                 if b.binding.show]
        assert shown and all(CJK.search(d) or d in ("$EDITOR", "MEMORY.md") for d in shown)
        # The palette: ctxlab's actions and Textual's own commands.
        titles = [title for title, _, _ in CtxlabCommands(app.screen).entries()]
        assert all(CJK.search(title) for title in titles)
        system = [c.title for c in app.get_system_commands(app.screen)]
        assert system and all(CJK.search(title) for title in system)
        # Stage names stay the course's identifiers; their hints are Chinese.
        app.source.resume()
        await play_to_end(pilot)
        timeline = app.query_one(StageTimeline)
        row = timeline.get_row_at(0)
        assert row[1] in {"fit_tool_results", "tool_result_budget", "micro_compact"}
        assert CJK.search(str(row[5]))


def test_every_breakdown_category_has_a_label_in_both_languages() -> None:
    from core.compact.breakdown import CATEGORIES

    for category in CATEGORIES:
        assert f"cat.{category}" in CATALOGS["en"], category
        assert f"cat.{category}" in CATALOGS["zh"], category
