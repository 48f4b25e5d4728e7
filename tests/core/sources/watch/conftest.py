"""``ctxlab watch`` in front of the scripted Messages server, and SDK clients pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.messages_server import MessagesServer
from tests.support.watching import RunningWatch


@pytest.fixture
def watch(messages_server: MessagesServer, tmp_path: Path) -> Iterator[RunningWatch]:
    """The proxy on an ephemeral port of 127.0.0.1, recording under ``tmp_path``."""
    with RunningWatch(messages_server.url, tmp_path) as running:
        yield running
