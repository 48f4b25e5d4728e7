"""Benchmark the memory store: re-index, incremental re-index, and watcher latency.

Run ``python bench/bench_memory.py``. :func:`run` returns the rows (``name``, ``value``,
``unit``, ``target``, ``baseline``, ``ratio``, ``ok``) so an aggregator can collect them.

* **re-index 5,000 records** — a fresh process (cold cache) rebuilding ``MEMORY.md``;
  target < 1 s.
* **one changed file → index** — the stat-keyed cache re-reads only the changed file; the
  baseline is a naive rebuild that re-reads and re-parses every file, measured in the same
  run. ``ratio`` is baseline / value (how many times faster).
* **hand edit → index_rebuilt** — a real watchdog observer; from the write to the
  callback, debounce included; target < 300 ms.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

RECORDS = 5_000
REPEAT = 5
EDITS = 7


def _ensure_importable() -> None:
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)


def _document(i: int, note: str = "") -> str:
    return (f"---\nname: record {i}\ndescription: a benchmark record number {i}{note}\n"
            f"type: project\n---\n\nBody of record {i}. " + "lorem ipsum " * 20 + "\n")


def _seed(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"record-{i:05}.md").write_text(_document(i), encoding="utf-8")


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _row(name: str, value: float, unit: str, target: float | None,
         baseline: float | None, ok: bool) -> dict[str, Any]:
    ratio = round(baseline / value, 1) if baseline and value else None
    return {"name": name, "value": round(value, 2), "unit": unit, "target": target,
            "baseline": None if baseline is None else round(baseline, 2), "ratio": ratio,
            "ok": bool(ok)}


def _naive_rebuild(root: Path) -> None:
    """What a cache-less store does on every change: re-read and re-parse every file."""
    from core.memory.index import ScanCache, render_index
    from core.memory.journal import atomic_write
    from core.memory.store import load_entry

    scan = ScanCache(load_entry).scan(root)
    atomic_write(root / "MEMORY.md", render_index(scan.records).encode("utf-8"))


def bench_reindex(root: Path) -> list[dict[str, Any]]:
    from core.memory.store import MemoryStore

    cold = statistics.median(
        _timed(lambda: MemoryStore(root).rebuild_index(notify=False)) for _ in range(REPEAT))
    store = MemoryStore(root)
    store.rebuild_index(notify=False)
    incremental, naive, reads = [], [], []
    for k in range(REPEAT):
        target = root / f"record-{k * 7:05}.md"
        target.write_text(_document(k * 7, f" (edit {k})"), encoding="utf-8")
        before = store.files_read
        incremental.append(_timed(lambda: store.rebuild_index(notify=False)))
        reads.append(store.files_read - before)
        naive.append(_timed(lambda: _naive_rebuild(root)))
        store.rebuild_index(notify=False)  # absorb nothing new; keeps the loop symmetric
    inc, base = statistics.median(incremental) * 1000, statistics.median(naive) * 1000
    return [
        _row(f"re-index {RECORDS:,} records (cold)", cold * 1000, "ms", 1000.0, None,
             cold < 1.0),
        _row("one changed file → index (files re-read: "
             f"{max(reads)})", inc, "ms", None, base, inc * 2 < base and max(reads) == 1),
    ]


def bench_watch(root: Path) -> dict[str, Any]:
    from core.memory.store import MemoryStore
    from core.memory.watch import MemoryWatcher

    arrived = threading.Event()
    stamps: list[float] = []

    def callback(event: Any) -> None:
        stamps.append(time.perf_counter())
        arrived.set()

    latencies = []
    with MemoryWatcher(MemoryStore(root), callback):
        time.sleep(0.2)  # let the observer settle before the first edit
        for k in range(EDITS):
            arrived.clear()
            stamps.clear()
            path = root / f"record-{k * 11:05}.md"
            start = time.perf_counter()
            path.write_text(_document(k * 11, f" (hand edit {k})"), encoding="utf-8")
            if arrived.wait(5.0):
                latencies.append(stamps[0] - start)
            time.sleep(0.15)  # let each edit settle so edits are measured one by one
    value = statistics.median(latencies) * 1000 if latencies else float("inf")
    return _row("hand edit → index_rebuilt", value, "ms", 300.0, None,
                len(latencies) == EDITS and value < 300)


def run() -> list[dict[str, Any]]:
    """Run every benchmark in a throw-away folder and return the rows."""
    _ensure_importable()
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-memory-") as tmp:
        root = Path(tmp) / ".memory"
        _seed(root, RECORDS)
        rows = bench_reindex(root)
        rows.append(bench_watch(root))
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    header = ("benchmark", "value", "target", "baseline", "ratio", "ok")
    lines = [header]
    for r in rows:
        lines.append((
            r["name"], f"{r['value']} {r['unit']}",
            "-" if r["target"] is None else f"< {r['target']:g} {r['unit']}",
            "-" if r["baseline"] is None else f"{r['baseline']} {r['unit']}",
            "-" if r["ratio"] is None else f"{r['ratio']}x",
            "yes" if r["ok"] else "NO"))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True))
                     for line in lines)


def main() -> int:
    rows = run()
    print(format_rows(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
