"""The real clients' sessions, recorded once per test run (they take a few seconds)."""

from __future__ import annotations

import os

import pytest

from tests.support.claude_code import Unavailable, claude_binary
from tests.support.claude_code_session import Recorded, record


@pytest.fixture(scope="session")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Both Claude Code sessions, watched (tests/support/claude_code_session.py).

    Skipped only where the CLI cannot be installed (no npm, no registry); CI sets
    ``CTXLAB_REQUIRE_CLIENTS`` on machines that have npm, and then that is a failure."""
    try:
        claude_binary()
    except Unavailable as exc:
        if os.environ.get("CTXLAB_REQUIRE_CLIENTS"):
            pytest.fail(f"the real client is required here: {exc}")
        pytest.skip(str(exc))
    return record(tmp_path_factory.mktemp("claude-code"))
