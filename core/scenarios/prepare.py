"""Preparing a scenario's workspace: its generated sample files and its starting memory.

Done once, before a session starts, and only in an empty workspace (a ``.ctxlab`` folder
aside): a workspace someone already worked in is never overwritten.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from core.memory.store import MemoryStore
from core.scenarios.model import Scenario
from core.scenarios.workspaces import generate


class Preparable(Protocol):
    workspace: Path
    scenario: Scenario | None


def prepare_workspace(options: Preparable) -> None:
    """Generate a scenario's sample files into an empty workspace, and seed its memory."""
    ws = options.workspace
    ws.mkdir(parents=True, exist_ok=True)
    scenario = options.scenario
    if scenario is None:
        return
    if not any(p for p in ws.iterdir() if p.name not in (".ctxlab",)):
        generate(scenario.workspace, ws)
        seed_memory(ws, scenario.memory)


def seed_memory(workspace: Path, records: Iterable[dict[str, str]]) -> None:
    """Write a scenario's starting records (through the store, like any other write)."""
    records = list(records)
    if not records:
        return
    store = MemoryStore(Path(workspace) / ".memory")
    for r in records:
        store.write(r["name"], r["description"], r["type"], r["body"])
