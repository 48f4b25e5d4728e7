"""The watcher: hand edits to ``.memory/`` rebuild the index within a few hundred ms.

A watchdog observer reports file events on its own thread. They are collected into a
pending set and flushed by a worker thread once the folder has been quiet for a moment (or
a ceiling is reached), so a burst of writes — an editor's save dance, a ``git checkout`` —
costs one rebuild. Only ``*.md`` names count: editor noise (``.foo.md.swp``, ``foo.md~``,
``4913``, ``.#foo.md``) and ctxlab's own temp files are ignored, and an editor's atomic save
(write a temp file, rename it over the record) counts through the rename's destination.

ctxlab's own writes — through any :class:`MemoryStore` on the folder in this process —
rebuild the index as they happen, so when the watcher flushes after them
:meth:`MemoryStore.sync_index` finds nothing new and no event is sent. The callback
runs on the worker thread — it must be thread-safe; no asyncio loop is assumed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from core.events import Error, Event
from core.memory.index import INDEX_NAME, is_candidate
from core.memory.store import MemoryStore

QUIET_SECONDS = 0.08  # flush once no event arrived for this long…
MAX_DELAY_SECONDS = 0.2  # …or this long after the first pending event, whichever is first
_KINDS = (FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
          FileClosedEvent)


def relevant_names(event: FileSystemEvent) -> list[str]:
    """The record (or index) names an event touches; moved events count both ends."""
    if event.is_directory or event.event_type not in ("created", "modified", "deleted",
                                                       "moved", "closed"):
        return []
    paths = [event.src_path]
    if event.event_type == "moved":
        paths.append(event.dest_path)
    names = [os.path.basename(os.fsdecode(p)) for p in paths if p]
    return [n for n in names if is_candidate(n) or n == INDEX_NAME]


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: MemoryWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        names = relevant_names(event)
        if names:
            self._watcher.notify(names)


class MemoryWatcher:
    """Watch a store's folder; call ``callback(IndexRebuilt)`` for each rebuild that a file
    change caused (trigger ``watch``). ``callback`` defaults to the store's emitter."""

    def __init__(self, store: MemoryStore, callback: Callable[[Event], Any] | None = None,
                 *, quiet: float = QUIET_SECONDS, max_delay: float = MAX_DELAY_SECONDS) -> None:
        self.store = store
        self._callback = callback or store.emit
        self._quiet = quiet
        self._max_delay = max_delay
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first = 0.0
        self._last = 0.0
        self._stopping = False
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self.rebuilds = 0  # flushes that produced an event (handy for tests and benches)

    def __enter__(self) -> MemoryWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def start(self) -> MemoryWatcher:
        """Bring the index up to date silently, then start observing."""
        if self.running:
            return self
        self.store.rebuild_index("startup", notify=False)  # creates the folder if needed
        self._stopping = False
        self._worker = threading.Thread(target=self._run, name="ctxlab-memory-watch",
                                        daemon=True)
        self._worker.start()
        observer = Observer()
        observer.daemon = True
        try:
            observer.schedule(_Handler(self), str(self.store.root), recursive=False,
                              event_filter=list(_KINDS))
            observer.start()
        except BaseException:  # e.g. the inotify watch limit: leave no thread behind
            self.stop()
            raise
        self._observer = observer
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop observing and join both threads; pending changes are flushed first."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join(timeout)
            self._worker = None

    def notify(self, names: list[str]) -> None:
        """Record changed names (called on watchdog's thread)."""
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first = now
            self._pending.update(names)
            self._last = now
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending and self._stopping:
                    return
                while not self._stopping:
                    now = time.monotonic()
                    due = min(self._last + self._quiet, self._first + self._max_delay)
                    if now >= due:
                        break
                    self._cond.wait(due - now)
                self._pending.clear()
            self._flush()

    def _flush(self) -> None:
        try:
            event = self.store.sync_index("watch")
        except Exception as exc:  # a vanished folder, a permission change…
            self._callback(Error(message=f"memory index rebuild failed: {exc}", kind="memory"))
            return
        if event is not None:
            self.rebuilds += 1
            self._callback(event)
