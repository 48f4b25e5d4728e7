from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.tools import ToolOutcome, ToolRunner


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a sibling ``outside/`` directory to try escaping into."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    return ws


@pytest.fixture
def run(workspace: Path) -> Callable[..., ToolOutcome]:
    """Run one tool call synchronously: ``run("read_file", path="a.txt")``."""
    runner = ToolRunner(workspace, bash_timeout=5)

    def call(name: str, **tool_input: Any) -> ToolOutcome:
        return asyncio.run(runner.run(name, tool_input))

    return call
