"""Kill a consolidating process with SIGKILL at many points; nothing may ever be lost.

A child process consolidates a copy of the same store and SIGKILLs itself at durable step
N (through the journal's checkpoint hook). Reopening the store must then show exactly the
old set or exactly the new set — never a mix, never fewer records — with a matching index
and no journal or temp file left behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.memory.index import render_index
from core.memory.journal import HISTORY_DIR, JOURNAL_NAME, MANIFEST_NAME
from core.memory.store import MemoryStore

REPO = Path(__file__).resolve().parents[3]
MIN_POINTS = 20

CHILD = textwrap.dedent("""
    import asyncio, os, signal, sys
    from core.memory import journal
    from core.memory.consolidate import consolidate_memories
    from core.memory.store import MemoryStore

    target, steps = int(sys.argv[2]), []

    def hook(step):
        steps.append(step)
        if len(steps) == target:
            os.kill(os.getpid(), signal.SIGKILL)

    journal.FAULT_HOOK = hook
    result = asyncio.run(consolidate_memories(MemoryStore(sys.argv[1]), None, force=True))
    assert result.ok and result.history, result
    print(len(steps))
""")


def seed(root: Path) -> None:
    store = MemoryStore(root)
    items = [(f"fact {i}", f"description {i}", f"body {i} " + "q" * i) for i in range(9)]
    # the same facts again, rewrapped (only these merge), and records that merely look alike
    items += [(f"fact {i} again", f"restated {i}", f"body {i}\n" + "q" * i) for i in range(8)]
    items += [("tabs_preference", "User prefers tabs", "Use tabs."),
              ("tabs-preference", "User prefers tabs", "Use tabs in Makefiles."),
              ("deploy day", "Deploys on Fridays", "Friday."),
              ("Deploy Day", "Deploys on Thursdays now", "Thursday.")]
    for i, (name, description, body) in enumerate(items):
        record = store.write(name, description, "project", body)
        os.utime(root / record.file, ns=(10**18 + i * 10**9,) * 2)


def snapshot(root: Path) -> list[tuple[str, str, str, str]]:
    store = MemoryStore(root)  # opening for writing runs recovery
    records = store.records()
    assert store.invalid() == []
    assert not (root / JOURNAL_NAME).exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    history = root / HISTORY_DIR
    partial = [p.name for p in history.iterdir()
               if not (p / MANIFEST_NAME).is_file()] if history.is_dir() else []
    assert partial == [], f"incomplete snapshots left in .history: {partial}"
    store.rebuild_index("startup", notify=False)
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == render_index(records)
    return sorted((r.name, r.description, r.type, r.body) for r in records)


def child(root: Path, target: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, str(root), str(target)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_sigkill_at_every_sampled_step_loses_nothing(tmp_path):
    original = tmp_path / "original"
    seed(original)
    before = snapshot(original)

    complete = tmp_path / "complete"
    shutil.copytree(original, complete)
    done = child(complete, 0)
    assert done.returncode == 0, done.stderr
    total = int(done.stdout.split()[-1])
    after = snapshot(complete)
    assert after != before and len(after) < len(before)

    points = sorted(set(range(1, total + 1)) if total <= 45 else
                    {1 + round(i * (total - 1) / 44) for i in range(45)})
    assert len(points) >= MIN_POINTS, total
    outcomes = {"old": 0, "new": 0}
    for n in points:
        work = tmp_path / f"kill-{n}"
        shutil.copytree(original, work)
        killed = child(work, n)
        assert killed.returncode == -signal.SIGKILL, (n, killed.stderr)
        state = snapshot(work)
        assert state in (before, after), f"step {n}: a mixed or reduced store"
        outcomes["old" if state == before else "new"] += 1
        shutil.rmtree(work)
    assert outcomes["old"] and outcomes["new"], outcomes


def test_a_record_named_near_name_max_is_replaced_atomically_and_an_abandoned_temp_swept(
        tmp_path):
    """The store's writes use the archive's temp names: they fit NAME_MAX (a fixed suffix
    made a 251-character record impossible to update) and recovery knows them."""
    from core.archive.atomic import sweep_stale_temp, temp_name
    from core.memory import journal

    record = tmp_path / ("n" * 248 + ".md")  # 251 bytes: the old temp name was 265
    journal.atomic_write(record, b"first\n")
    journal.atomic_write(record, b"second\n")
    assert record.read_bytes() == b"second\n"
    abandoned = Path(temp_name(record))
    abandoned.write_bytes(b"half")  # what a kill between write and rename leaves
    # the sweep recovery runs under the store lock, which every writer of the store holds
    assert sweep_stale_temp(tmp_path, writers_excluded=True) == [abandoned.name]
    assert [p.name for p in tmp_path.iterdir()] == [record.name]
