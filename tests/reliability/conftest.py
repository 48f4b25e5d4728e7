"""Shared helpers for the reliability suite: the CLI against the scripted Messages server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], workspace: Path, *args: str
            ) -> tuple[int, list[dict[str, Any]], str]:
    """``ctxlab run --headless --provider anthropic --json``: exit code, events, stderr."""
    code = main(["run", "--headless", "--provider", "anthropic", "--json",
                 "--workspace", str(workspace), *args])
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines()]
    return code, events, captured.err


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def session_path(workspace: Path, name: str) -> Path:
    return workspace / ".ctxlab" / "sessions" / name / "session.json"


@pytest.fixture
def anyio_backend() -> str:
    """Workbench tests run on asyncio (Textual's loop), through anyio's pytest plugin."""
    return "asyncio"
