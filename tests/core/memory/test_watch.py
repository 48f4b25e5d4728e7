"""The watcher, against a real watchdog observer: hand edits in, own writes and noise out.

Every wait polls with a generous deadline, so a loaded machine makes the tests slower,
not flaky.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from core.events import Event, IndexRebuilt
from core.memory.store import MemoryStore
from core.memory.watch import MemoryWatcher, relevant_names
from tests.core.memory.conftest import document, wait_for


class Sink:
    """A thread-safe callback that remembers what it got and on which thread."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)
            self.threads.add(threading.current_thread().name)

    def rebuilt(self) -> list[IndexRebuilt]:
        with self._lock:
            return [e for e in self.events if isinstance(e, IndexRebuilt)]


@pytest.fixture
def watched(tmp_path: Path):
    store = MemoryStore(tmp_path / ".memory")
    store.write("seed", "a seed record", "user", "body")
    sink = Sink()
    watcher = MemoryWatcher(store, sink).start()
    yield store, sink, watcher
    watcher.stop()


def index_of(store: MemoryStore) -> str:
    return (store.root / "MEMORY.md").read_text(encoding="utf-8")


def changed_files(sink: Sink) -> set[str]:
    return {name for event in sink.rebuilt() for name in event.changed}


def settle(sink: Sink, predicate) -> IndexRebuilt:
    """Wait until ``predicate(last event)`` holds; a write the OS delivered in two pieces
    may cause an extra intermediate rebuild, which is fine — the final state is checked."""
    return wait_for(lambda: sink.rebuilt() and predicate(sink.rebuilt()[-1])
                    and sink.rebuilt()[-1])


def test_a_hand_written_file_rebuilds_the_index(watched):
    store, sink, _ = watched
    (store.root / "tabs.md").write_text(document("tabs", "by hand"), encoding="utf-8")
    event = settle(sink, lambda e: e.records == 2)
    assert (event.trigger, event.changed) == ("watch", ("tabs.md",))
    assert changed_files(sink) == {"tabs.md"}
    assert "- [tabs](tabs.md) - by hand" in index_of(store)
    assert sink.threads and threading.main_thread().name not in sink.threads


def test_an_editor_style_atomic_save_counts_through_the_rename(watched):
    store, sink, _ = watched
    target = store.root / "seed.md"
    (store.root / ".seed.md.swp").write_text("swap", encoding="utf-8")
    (store.root / "4913").write_text("", encoding="utf-8")
    (store.root / "4913").unlink()
    os.replace(target, store.root / "seed.md~")  # vim's backup rename
    tmp = store.root / ".seed.md.tmp123"
    tmp.write_text(document("seed", "saved by an editor"), encoding="utf-8")
    os.replace(tmp, target)
    settle(sink, lambda e: "saved by an editor" in index_of(store))
    assert changed_files(sink) == {"seed.md"}


def test_a_deleted_file_leaves_the_index(watched):
    store, sink, _ = watched
    (store.root / "seed.md").unlink()
    event = settle(sink, lambda e: e.records == 0)
    assert event.changed == ("seed.md",)
    assert index_of(store) == ""


def test_a_file_made_invalid_by_hand_is_counted_invalid(watched):
    store, sink, _ = watched
    (store.root / "seed.md").write_text("no frontmatter any more", encoding="utf-8")
    settle(sink, lambda e: (e.records, e.invalid) == (0, 1))


def test_noise_alone_never_rebuilds(watched):
    store, sink, _watcher = watched
    for noise in (".seed.md.swp", "seed.md~", "4913", ".#seed.md", "notes.txt", ".x.md.tmp"):
        (store.root / noise).write_text("noise", encoding="utf-8")
    (store.root / "real.md").write_text(document("real", "a real edit"), encoding="utf-8")
    settle(sink, lambda e: e.records == 2)
    assert changed_files(sink) == {"real.md"}


def test_own_writes_are_not_reported(watched):
    store, sink, _watcher = watched
    for i in range(5):
        store.write(f"own {i}", f"written by ctxlab {i}", "project", "b")
    store.delete("own-0.md")
    (store.root / "hand.md").write_text(document("hand", "by hand"), encoding="utf-8")
    settle(sink, lambda e: e.records == 6)
    assert changed_files(sink) == {"hand.md"}


def test_writes_through_another_store_object_are_not_hand_edits(watched):
    store, sink, _ = watched
    agent_side = MemoryStore(store.root)  # e.g. the agent loop's store next to the UI's
    agent_side.write("from the agent", "stored by extraction", "user", "b")
    (store.root / "hand.md").write_text(document("hand", "by hand"), encoding="utf-8")
    settle(sink, lambda e: e.records == 3)
    assert changed_files(sink) == {"hand.md"}


def test_a_burst_of_writes_is_one_rebuild(tmp_path):
    store = MemoryStore(tmp_path / ".memory")
    sink = Sink()
    with MemoryWatcher(store, sink, quiet=0.5, max_delay=3.0) as watcher:
        names = {f"burst-{i:02}.md" for i in range(40)}
        for name in sorted(names):
            (store.root / name).write_text(document(name[:-3], "burst"), encoding="utf-8")
        (event,) = wait_for(sink.rebuilt)
        assert set(event.changed) == names and event.records == 40
        assert watcher.rebuilds == 1


def test_a_hand_edited_index_is_restored(watched):
    store, sink, _ = watched
    (store.root / "MEMORY.md").write_text("hand-maintained lies\n", encoding="utf-8")
    settle(sink, lambda e: index_of(store) == "- [seed](seed.md) - a seed record\n")
    assert changed_files(sink) == {"MEMORY.md"}


def test_stop_joins_and_silences_the_watcher(tmp_path):
    store = MemoryStore(tmp_path / ".memory")
    sink = Sink()
    watcher = MemoryWatcher(store, sink).start()
    assert watcher.running
    watcher.stop()
    assert not watcher.running
    assert not any(t.name == "ctxlab-memory-watch" for t in threading.enumerate())
    (store.root / "late.md").write_text(document("late", "after stop"), encoding="utf-8")
    watcher.start()  # restartable; the start-up rebuild is silent
    (store.root / "later.md").write_text(document("later", "after restart"), encoding="utf-8")
    settle(sink, lambda e: e.records == 2)
    assert changed_files(sink) == {"later.md"}
    watcher.stop()
    watcher.stop()  # idempotent


def test_the_watcher_creates_a_missing_folder(tmp_path):
    store = MemoryStore(tmp_path / "fresh" / ".memory")
    with MemoryWatcher(store, Sink()):
        assert store.root.is_dir()


@pytest.mark.parametrize(("kind", "src", "dest", "expected"), [
    ("modified", "/m/a.md", "", ["a.md"]),
    ("moved", "/m/.a.md.swp", "/m/a.md", ["a.md"]),
    ("moved", "/m/a.md", "/m/a.md~", ["a.md"]),
    ("created", "/m/4913", "", []),
    ("opened", "/m/a.md", "", []),
    ("closed_no_write", "/m/a.md", "", []),
])
def test_relevant_names(kind, src, dest, expected):
    class Fake:
        event_type, src_path, dest_path, is_directory = kind, src, dest, False

    assert relevant_names(Fake()) == expected
