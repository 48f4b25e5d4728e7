"""A Claude Code session's subagents in the replay: the panel's rows, ``--with-subagents``."""

from __future__ import annotations

from pathlib import Path

from core.sources.replay import load_recording
from core.sources.replay.source import ReplayOptions, ReplaySource
from tests.core.sources.replay.test_claude_code_real import MAIN_WITH_SUBAGENT, SESSION
from tui.cli import main
from tui.widgets.replay_panel import ReplayPanel


def test_the_panel_has_a_row_per_subagent_with_its_requests_and_tokens(tmp_path: Path):
    source = ReplaySource(load_recording(MAIN_WITH_SUBAGENT), ReplayOptions(workdir=tmp_path))
    panel = ReplayPanel()
    panel.start = source.start_event()
    text = panel.text()
    assert "subagents/agent-ad28c263592ced03c.jsonl" in text
    assert "general-purpose “Count lines”: 2 requests, 0 compactions, 2,100 tokens in" in text


def test_with_subagents_ends_with_the_totals_of_both(tmp_path: Path, capsys):
    assert main(["replay", str(MAIN_WITH_SUBAGENT), "--headless", "--with-subagents",
                 "--workdir", str(tmp_path / "w")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(general-purpose, 2 requests, 0 compactions, 2,100 tokens in)" in out
    assert out.endswith("with 1 subagent: 4 requests (2 + 2), 0 compactions (0 + 0), "
                        "12,100 tokens in (10,000 + 2,100)")


def test_without_subagents_the_totals_say_so(tmp_path: Path, capsys):
    assert main(["replay", str(SESSION), "--headless", "--with-subagents",
                 "--workdir", str(tmp_path / "w")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "with 0 subagents: 9 requests (9 + 0), 2 compactions (2 + 0)" in out
