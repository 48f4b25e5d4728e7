"""``ctxlab watch`` in front of the scripted Messages server (or the OpenAI one), and SDK
clients pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.messages_server import MessagesServer
from tests.support.openai_server import OpenAIServer
from tests.support.watching import RunningWatch


@pytest.fixture
def watch(messages_server: MessagesServer, tmp_path: Path) -> Iterator[RunningWatch]:
    """The proxy on an ephemeral port of 127.0.0.1, recording under ``tmp_path``."""
    with RunningWatch(messages_server.url, tmp_path) as running:
        yield running


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def openai_watch(openai_server: OpenAIServer, tmp_path: Path) -> Iterator[RunningWatch]:
    """A watch in front of the scripted OpenAI server."""
    with RunningWatch(openai_server.origin, tmp_path) as running:
        yield running
