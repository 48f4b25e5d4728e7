"""A recorded agent's compaction says what that agent did, never ctxlab's rule for the name."""

from __future__ import annotations

from core.compact.managers import Manager
from core.config import Thresholds
from core.events import Stage
from tests.core.sources.replay.conftest import WATCHED_CODEX
from tests.core.sources.replay.test_claude_code_real import SESSION
from tests.core.sources.replay.test_source import replay
from tui.why import why_fired


def test_claude_codes_two_compactions_say_their_trigger_tokens_and_what_was_kept(tmp_path):
    _, rec, _ = replay(SESSION, tmp_path)
    stages = [s for s in rec.of(Stage) if s.by == "claude-code"]
    assert [s.stage for s in stages] == ["auto_compact", "manual_compact"]
    auto, manual = (why_fired(s, Thresholds()) for s in stages)
    assert auto == ("Claude Code compacted automatically at 190,048 tokens (its own trigger) "
                    "→ 764 tokens: summary + 2 preserved messages")
    assert manual == "the user ran /compact at 190,040 tokens → 700 tokens: summary + 1 " \
        "preserved message"
    assert stages[0].post_tokens == 764
    for text in (auto, manual):
        assert "compact tool" not in text and "model called" not in text
    # nothing but Claude Code's two compactions is called one on the original's side
    assert [s for s in rec.of(Stage) if s.by not in ("claude-code", "ctxlab")] == []


def test_the_pipelines_own_manual_compact_keeps_its_rule(tmp_path):
    event = Stage(stage="manual_compact", before_chars=10, after_chars=5, before_messages=4,
                  after_messages=1)
    assert "compact tool" in why_fired(event, Thresholds())


def test_a_codex_compaction_says_it_kept_the_users_messages_and_its_summary(tmp_path):
    _, rec, _ = replay(WATCHED_CODEX, tmp_path)
    [stage] = [s for s in rec.of(Stage) if s.by == "codex"]
    assert stage.after_messages == 1  # the prompts and the summary, merged into one message
    assert why_fired(stage, Thresholds()) == (
        "Codex compacted automatically at 50,000 tokens (its own trigger): the user's "
        "messages and its summary")


def test_a_rewritten_history_is_not_said_to_have_kept_a_summary():
    """A request that does not extend the one before is a ``rewrite``; its file is
    ctxlab's note of it, not a summary the agent kept."""
    event = Stage(stage="rewrite_compact", before_chars=9_000, after_chars=300,
                  before_messages=9, after_messages=2, by=Manager.CODEX, trigger="rewrite",
                  files=("summaries/002-codex-rewrite.md",), pre_tokens=5_000)
    said = why_fired(event, Thresholds())
    assert said == "Codex rewrote its own history (rewrite) at 5,000 tokens"
