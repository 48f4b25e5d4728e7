"""The real clients' sessions, recorded once per test run (they take a few seconds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import codex_session
from tests.support.claude_code import claude_binary
from tests.support.claude_code_session import Recorded, record
from tests.support.codex import codex_binary
from tests.support.npm_clients import Unavailable
from tests.support.required import require


@pytest.fixture(scope="session")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Both Claude Code sessions, watched (tests/support/claude_code_session.py).

    Skipped only where the CLI cannot be installed (no npm, no registry); CI sets
    ``CTXLAB_REQUIRE_CLIENTS`` on machines that have npm, and then that is a failure."""
    _installed(claude_binary)
    return record(tmp_path_factory.mktemp("claude-code"))


@pytest.fixture(scope="session")
def codex(tmp_path_factory: pytest.TempPathFactory) -> codex_session.Recorded:
    """Both Codex sessions, watched (tests/support/codex_session.py); skipped as above."""
    _installed(codex_binary)
    return codex_session.record(tmp_path_factory.mktemp("codex"))


@pytest.fixture(scope="session")
def codex_direct(tmp_path_factory: pytest.TempPathFactory) -> codex_session.Recorded:
    """The same Codex sessions straight to the scripted server: what watching must not
    change."""
    _installed(codex_binary)
    return codex_session.record(tmp_path_factory.mktemp("codex-direct"), watched=False)


def _installed(binary: Callable[[], Path]) -> None:
    require(binary, Unavailable, "CTXLAB_REQUIRE_CLIENTS", "the real client")
