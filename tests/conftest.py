"""Shared fixtures. Keep each fixture small and say what it is for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.messages_server import MessagesServer


@pytest.fixture
def messages_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesServer]:
    """A scripted Messages-API server on 127.0.0.1 (see tests/support/messages_server.py).

    Proxy settings are neutralised for 127.0.0.1 so the SDK talks to it directly, and the
    SDK's environment knobs are cleared so a developer's shell cannot redirect the tests.
    """
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "CTXLAB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with MessagesServer() as server:
        yield server
