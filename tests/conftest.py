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


@pytest.fixture
def server_env(messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
               ) -> MessagesServer:
    """The SDK's own environment variables point at the scripted server; the key is fake."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("CTXLAB_MODEL", "claude-test")
    return messages_server
