"""Where the agent loop meets long-term memory (s09): recall before, extract after.

Kept apart from :mod:`core.sources.agent.loop` so the loop reads like the course's and memory can be
switched off (the ``compact`` strategy of the teaching lab) without touching it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.events import Event
from core.memory import (
    MemoryStore,
    consolidate_memories,
    extract_memories,
    render_memory_sections,
    select_memories,
)
from core.memory.consolidate import CONSOLIDATE_THRESHOLD
from core.providers.base import Provider
from core.sources.agent.system_prompt import Section


class MemoryHooks:
    """Recall and extraction on one store: the session's (one store per workspace), or a
    store of its own when the agent runs alone."""

    def __init__(self, workspace: Path, emit: Callable[[Event], Any], enabled: bool = True,
                 consolidate_threshold: int = CONSOLIDATE_THRESHOLD,
                 store: MemoryStore | None = None) -> None:
        self.enabled = enabled
        self.emit = emit
        self.consolidate_threshold = consolidate_threshold
        if not enabled:
            self.store = None
        elif store is None:
            self.store = MemoryStore.open(Path(workspace) / ".memory", emit)
        else:
            self.store = store
            if store.root.is_dir():  # as opening does: the index is brought up to date
                store.rebuild_index("startup")
        self.recalled: list[str] = []

    async def recall(self, history: list[dict], provider: Provider | None) -> list[Section]:
        """Select records for this request and render the system-prompt sections."""
        if self.store is None:
            return []
        selected = await select_memories(self.store, history, provider, self.emit)
        self.recalled = [r.file for r in selected]
        return [Section(name, text) for name, text in render_memory_sections(self.store,
                                                                              selected)]

    async def after_turn(self, turn_messages: list[dict], extract_provider: Provider | None,
                         consolidate_provider: Provider | None) -> None:
        """Extract from the turn as it was before compaction; consolidate when due."""
        if self.store is None:
            return
        stored = await extract_memories(self.store, turn_messages, extract_provider, self.emit)
        if stored and len(self.store.records()) >= self.consolidate_threshold:
            await consolidate_memories(self.store, consolidate_provider, self.emit)
