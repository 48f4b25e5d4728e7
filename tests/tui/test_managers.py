"""The workbench says who manages the context in words, from one name per manager."""

from __future__ import annotations

from core.compact.managers import Manager
from tui.i18n import set_language
from tui.locales import CATALOGS
from tui.managers import by_label, manager_label, managers_label


def test_every_manager_has_words_in_every_language() -> None:
    for catalog in CATALOGS.values():
        assert [m for m in Manager if f"manager.{m.value}" not in catalog] == []


def said(context_manager: str) -> str:
    from core.events import RunStart

    return managers_label(RunStart(provider="p", workspace="/w",
                                   context_manager=context_manager).managers)


def test_a_context_manager_value_is_said_in_words_older_names_too() -> None:
    assert said("ctxlab+api-compact") == "s08 pipeline + API compaction"
    assert said("s08+api-edit") == "s08 pipeline + API context editing"
    assert manager_label("someone-new") == "someone-new"  # a newer log's name, shown as is
    assert by_label(Manager.CLAUDE_CODE) == "by Claude Code"
    try:
        set_language("zh")
        assert said("truncate+api-edit") == "截断 + API 上下文编辑"
    finally:
        set_language("en")


def test_the_inspector_says_whose_stage_it_is_unless_it_is_the_pipelines() -> None:
    from core.events import Stage
    from tui.screens.inspector import whose_parts

    def stage(name: str, by: str) -> Stage:
        return Stage(stage=name, by=by, before_chars=9, after_chars=3, before_messages=4,
                     after_messages=2)

    assert whose_parts(stage("micro_compact", Manager.PIPELINE)) == ()
    assert whose_parts(stage("sliding_window", Manager.TRUNCATE))[1][0] == "by truncation"
    assert whose_parts(stage("client_summary", Manager.CLIENT))[1][0] == "by watched client"
