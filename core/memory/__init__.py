"""Long-term memory (the course's s09): a folder of Markdown records, recalled per request.

The store (``<workspace>/.memory/``) holds one ``*.md`` file per record — YAML frontmatter
``name``, ``description``, ``type`` (user | feedback | project | reference), a blank line,
the body — and ``MEMORY.md``, an index derived from the valid records. People may edit,
rename or break the files by hand; invalid files are reported, never touched.

Public API (every ``emit`` is a callable taking a :mod:`core.events` event; ``None`` means
the store's own emitter; every ``provider`` may be ``None`` for the offline, deterministic
implementation)::

    store = MemoryStore(root: Path, emit=None, *, read_only=False)
    store = MemoryStore.open(root, emit=None)         # + index rebuild, trigger "startup"
    store.records() -> list[Record]                   # valid records, by file name
    store.invalid() -> list[InvalidFile]              # (file, reason); left untouched
    store.get(name_or_file) -> Record | None
    store.write(name, description, type, body) -> Record   # memory_written + index_rebuilt
    store.delete(file) -> bool
    store.rebuild_index(trigger="command") -> IndexRebuilt
    store.index_text() -> str                          # what MEMORY.md holds

    await select_memories(store, messages, provider=None, emit=None) -> list[Record]
    render_memory_sections(store, selected) -> list[tuple[str, str]]  # system-prompt parts
    await extract_memories(store, turn_messages, provider=None, emit=None) -> list[Record]
    await consolidate_memories(store, provider=None, emit=None, *, force=False)
        -> ConsolidationResult
    MemoryWatcher(store, callback=None).start() / .stop()   # callback(IndexRebuilt), any thread

Per user request: ``select_memories`` (one ``select`` call, keyword fallback) then append
``render_memory_sections`` to the ``system`` prompt — memory never enters ``messages``.
At the end of a turn without tool calls: ``extract_memories`` with the turn's messages as
they were *before* compaction (keep a copy when the turn starts), which gates and stores;
then, if it stored anything and the store holds 10+ records, ``consolidate_memories``.
The agent loop does both in :meth:`core.memory.hooks.MemoryHooks.after_turn`.
"""

from core.memory.consolidate import (
    ConsolidationResult,
    consolidate_memories,
    offline_consolidate,
)
from core.memory.extract import extract_memories, gate, offline_candidates, temporary_marker
from core.memory.index import INDEX_NAME, render_index
from core.memory.recall import render_memory_sections
from core.memory.select import keyword_select, select_memories
from core.memory.store import (
    MEMORY_TYPES,
    FrontmatterError,
    InvalidFile,
    MemoryStore,
    MemoryStoreError,
    Record,
    parse_document,
    record_from_text,
    render_document,
    slugify,
)
from core.memory.watch import MemoryWatcher

__all__ = [
    "INDEX_NAME",
    "MEMORY_TYPES",
    "ConsolidationResult",
    "FrontmatterError",
    "InvalidFile",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryWatcher",
    "Record",
    "consolidate_memories",
    "extract_memories",
    "gate",
    "keyword_select",
    "offline_candidates",
    "offline_consolidate",
    "parse_document",
    "record_from_text",
    "render_document",
    "render_index",
    "render_memory_sections",
    "select_memories",
    "slugify",
    "temporary_marker",
]
