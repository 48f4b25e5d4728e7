"""The watch screen in Chinese: ``--lang zh`` promises every label, title, notice and footer
key in Chinese, and the watch screen is part of the workbench.

The text is read back from what the screen paints, as a person reads it: a string left in
English anywhere on the watch screen shows up here, wherever it is drawn from.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App

from core.events import Stage, WatchRequest, WatchStart
from tests.tui.conftest import wait_for
from tui.cli.watch_scene import canned_watch_app, settle_watch
from tui.i18n import set_language
from tui.screens.watch import WatchScreen
from tui.widgets.watch_detail import RequestDetail, detail_text, stage_lines

pytestmark = pytest.mark.anyio
SIZE = (160, 48)
# Every English word the watch screen used to draw; identifiers (stage names, env vars,
# usage fields, stop reasons, HTTP methods, the request's purpose) are no UI words.
ENGLISH = ("Requests", "Request", "Stages (client)", "time", "purpose", "model", "msgs",
           "chars", "~tok", "Δ msgs", "cache w", "cache r", "stop", "watching",
           "point a client at it", " or ", "recording", "usage:", "status", "first byte",
           "conversation", "appended", "removed", "rewritten", "messages,", "tokens estimated",
           "bytes", "by watched client", "request body", "quit", "Quit", "Help", "Theme",
           "palette", "starting the proxy", "waiting for the answer", "no request yet",
           "no client compaction yet", "no longer kept", "summary:", "gone:")


def painted(app: App[object]) -> str:
    """The characters the screen shows, row by row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def english_left(text: str) -> list[str]:
    """The English UI words of the watch screen found in ``text`` (``/v1/messages`` and the
    ``count_tokens``-style identifiers are cut out first: they are a path and field names)."""
    text = re.sub(r"/v1/messages|\w+_\w+", " ", text)
    return [word for word in ENGLISH
            if re.search(rf"(?<![\w~]){re.escape(word)}(?!\w)", text)]


async def test_the_watch_screen_is_chinese_from_titles_to_footer(tmp_path: Path) -> None:
    app = canned_watch_app(tmp_path, lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle_watch(pilot)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        text = painted(app)
        assert "╭─ 请求列表 ─" in text and "╭─ 请求 ─" in text and "╭─ 阶段（客户端） ─" in text
        header = next(line for line in text.splitlines() if "│ #" in line)
        assert re.findall(r"时间|用途|模型|消息数|字符|约 token|Δ 消息|输入|缓存写|缓存读",
                          header) == ["时间", "用途", "模型", "消息数", "字符", "约 token",
                                      "Δ 消息", "输入", "缓存写", "缓存读"]
        footer = text.splitlines()[-1]
        assert "b 请求体" in footer and "q 退出" in footer
        assert "正在观察 http://127.0.0.1:8787 → https://api.anthropic.com · 录制到 " in text
        assert "让客户端指向它：ANTHROPIC_BASE_URL=http://127.0.0.1:8787 或 " in text
        assert "对话 c3ae6932d：追加 +2 条，删除 0 条，改写 1 条" in text
        assert "5 条消息，3,520 字符，估计约 920 token，3,766 字节" in text
        assert "用量：input_tokens 3,600" in text
        assert "状态 200，停止原因 end_turn，1,503 毫秒（首字节 1,403 毫秒）" in text
        assert "client_micro_compact（由 被观察的客户端）：3,271 → 304" in text
        assert "│ 字符，3 → 3 条消息" in text  # the stage's line, wrapped
        assert "toolu_1：3,002 字符 → '[Old tool result content cleared]'" in text
        assert english_left(text) == []


async def test_an_empty_watch_screen_and_its_notice_are_chinese(tmp_path: Path) -> None:
    """Before the proxy is up, before the first request and answer, and a body no longer
    kept: the states the canned scene passes through too fast to be seen."""
    app = canned_watch_app(tmp_path, lang="zh")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle_watch(pilot)
        screen = WatchScreen(body_of=lambda _id: None)
        await app.push_screen(screen)
        await pilot.pause()
        text = painted(app)
        assert "正在启动代理…" in text and "还没有请求：让客户端指向这个代理" in text
        assert "客户端尚未压缩" in text and "b 请求体" in text.splitlines()[-1]
        screen.show(WatchRequest(id=7, method="POST", path="/v1/messages", time="t",
                                 purpose="main", conversation="c1", messages=1, chars=10,
                                 appended=1))
        await pilot.pause()
        assert "等待回答…" in str(screen.query_one(RequestDetail).render())
        await pilot.press("b")
        await wait_for(pilot, lambda: bool(app._notifications))
        await pilot.pause(0.1)
        text = painted(app)
        assert "这个请求体已不在内存中" in "".join(text.split())
        assert english_left(text) == []
        # Under --no-record there is no recording to point to; with one, the notice names it.
        messages = [str(n.message) for n in app._notifications]
        assert "--no-record" in messages[-1]
        screen.show(WatchStart(listen="http://127.0.0.1:1", upstream="http://127.0.0.1:2",
                               recording="/w/.ctxlab/watch/r.jsonl"))
        await pilot.press("b")
        await pilot.pause(0.2)
        assert "/w/.ctxlab/watch/r.jsonl" in str(list(app._notifications)[-1].message)


def test_the_english_detail_reads_as_before() -> None:
    """The English words are the catalog's now, and the same."""
    request = WatchRequest(id=2, method="POST", path="/v1/messages", time="t", purpose="main",
                           conversation="c1", messages=1, chars=1, est_tokens=1,
                           body_bytes=1, appended=1)
    assert detail_text(request, None, []).splitlines()[1:4] == [
        "conversation c1: +1 appended, 0 removed, 0 rewritten",
        "1 message, 1 chars, ~1 tokens estimated, 1 bytes", ""]


def test_a_client_stages_ledger_reads_in_chinese() -> None:
    """A summary and a removed message, which the canned client never produces."""
    stage = Stage(stage="client_compact", by="client", before_chars=9_000, after_chars=700,
                  before_messages=9, after_messages=1,
                  ledger=[{"summary": "the user asked for the files"},
                          {"message_index": 3, "role": "user", "chars": 4_200,
                           "preview": "file.txt"}])
    english = stage_lines(stage)
    assert english[1:] == ["   summary: 'the user asked for the files'",
                           "   gone: message 3 (user, 4,200 chars) 'file.txt'"]
    assert english[0].endswith("9,000 → 700 chars, 9 → 1 message")
    set_language("zh")
    assert stage_lines(stage) == [
        "✂ client_compact（由 被观察的客户端）：9,000 → 700 字符，9 → 1 条消息",
        "   摘要：'the user asked for the files'",
        "   移除：第 3 条消息（user，4,200 字符）'file.txt'"]
