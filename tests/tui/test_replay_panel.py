"""The Replay panel says which limits ctxlab's side runs at and, for a watch recording,
which conversation is replayed and what else the recording holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.events import Emitter, ReplayStart
from core.sources.replay import load_recording
from core.sources.replay.limits import LimitMode
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.conftest import FIXTURES
from tui.widgets.replay_panel import ReplayPanel

SUBAGENT = FIXTURES / "watch-2.1.197" / "subagent.jsonl"


def start(tmp_path: Path, limits: LimitMode) -> ReplayStart:
    events: list = []
    source = ReplaySource(load_recording(SUBAGENT), ReplayOptions(
        workdir=tmp_path / "w", limits=limits, seekable=False))
    assert asyncio.run(source.run(Emitter(sinks=[events.append])))
    return next(e for e in events if isinstance(e, ReplayStart))


def test_the_panel_names_the_limits_and_the_conversations(tmp_path):
    panel = ReplayPanel()
    panel.start = start(tmp_path, LimitMode.WINDOW)
    text = panel.text()
    assert "ctxlab's limits: " in text and "scaled to the model's 200,000-token window" in text
    assert "conversation 1 of 2: MAIN-TASK: Read notes.txt" in text
    assert "not replayed: 2 (ctxlab replay --conversation ID)" in text
    panel.start = start(tmp_path / "c", LimitMode.COURSE)
    assert "50,000 chars, 50 messages: the course's limits" in panel.text()


def test_the_limits_are_said_in_the_active_language(tmp_path):
    from tui.i18n import set_language

    panel = ReplayPanel()
    panel.start = start(tmp_path, LimitMode.WINDOW)
    english = panel.text()
    set_language("zh")
    try:
        chinese = panel.text()
    finally:
        set_language("en")
    assert "按模型 200,000 token 的上下文窗口换算" in chinese
    assert "scaled to the model's" not in chinese and "scaled to the model's" in english
