"""Paths of the replay fixtures (tests/fixtures/replay), one per format."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "replay"
CLAUDE = FIXTURES / "claude-code" / "5b1f3c2e-8d4a-4f0e-9a57-2c6d1e0b7a91.jsonl"
CODEX = FIXTURES / "codex" / \
    "rollout-2025-10-14T16-02-11-0199e3a4-7c2b-7d31-9f0e-5a8b2c4d6e10.jsonl"
MESSAGES = FIXTURES / "messages" / "history.json"
MESSAGES_BODY = FIXTURES / "messages" / "request-body.json"
REQUESTS = FIXTURES / "requests" / "requests.jsonl"
CODEX_0_58 = FIXTURES / "codex-0.58.0" / "compaction.jsonl"
CODEX_0_171 = FIXTURES / "codex-0.171.0" / "remote-compaction.jsonl"
WATCHED_CODEX = FIXTURES / "watch-codex-0.171.0" / "local-compaction.jsonl"
WATCHED_CODEX_REMOTE = FIXTURES / "watch-codex-0.171.0" / "remote-compaction.jsonl"
CHAT = FIXTURES / "requests" / "chat-completions.jsonl"
