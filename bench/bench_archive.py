"""The archive at scale and under a kill: opening a long-lived workspace, and crash safety.

* **open and first trust lookup** — ``Compactor(workspace)`` on a workspace whose manifest
  lists 50,000 results (the files exist, the log ends in a line cut off by a kill, the
  manifest's index is the one the last run left), then its first trust lookup: a pointer to
  a known result (its file hashed) and a path nobody wrote. Target < 20 ms, best of 5.
  Baseline: what the course's compactor does on start (create its output folder). The
  lookups read the index and only the log's tail past it, and must report the torn line.
* **the same with no index** — the index deleted first, so the first lookup builds it from
  the whole log (what the first run after an upgrade, or after the index was lost, pays);
  reported, no target.
* **first append** — a fresh ``Compactor`` persists one small result and flushes it:
  reported, no target. It includes the archive's sweep for temporary files a killed writer
  left, which lists the folder of 50,000 files once per process.
* **kill during a write** — a child process persists fresh 20 MB results in a loop (the
  streamed save that writes, hashes and counts in one pass), each followed by 50 small ones
  (written with no name and linked once whole, :mod:`core.archive.unnamed`), and is
  SIGKILLed at a random moment, several times; after each kill a new archive checks every
  file the manifest lists against its recorded hash and every result file against the hash
  in its name. Target: nothing half-trusted (0).

Run: ``python bench/bench_archive.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.archive.content_hash import digest_bytes
from core.archive.manifest_index import INDEX
from core.archive.store import MANIFEST, RESULTS_DIR, Archive, earlier_text
from core.compact.pipeline import Compactor

ROOT = Path(__file__).resolve().parents[1]
RESULTS = 50_000
OPEN_TARGET_MS = 20.0
REPEATS = 5
KILL_ROUNDS = 6
KILL_MB = 20

Row = dict[str, Any]


def build_workspace(root: Path, count: int = RESULTS) -> None:
    """``count`` small result files, their manifest lines and one wrapper line each, and a
    last line torn by a kill."""
    folder = root / RESULTS_DIR
    folder.mkdir(parents=True)
    lines = []
    for i in range(count):
        data = f"result {i}\n".encode()
        digest = digest_bytes(data)
        name = f"toolu_{i:06d}-{digest[:8]}-{digest[:16]}.txt"
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
        rel = f"{RESULTS_DIR.as_posix()}/{name}"
        lines.append(json.dumps({"path": rel, "tool_use_id": f"toolu_{i:06d}",
                                 "chars": len(data), "blake3": digest, "format": "text"}))
        lines.append(json.dumps({"path": rel, "pointer": hashlib.sha256(rel.encode())
                                 .hexdigest()}))
    text = "\n".join(lines) + '\n{"path": ".task_outputs/tool-res'  # torn by a kill
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def _best_ms(fn, repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def open_rows() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as tmp:
        root = Path(tmp)
        build_workspace(root)
        folder = root / RESULTS_DIR
        log_mb = (folder / MANIFEST).stat().st_size / 1e6
        base = _best_ms(lambda: (root / ".task_outputs" / "tool-results")
                        .mkdir(parents=True, exist_ok=True))
        probe = f"{RESULTS_DIR.as_posix()}/"
        known = sorted(folder.glob("toolu_012345-*.txt"))[0].name

        def first_lookup() -> None:
            archive = Compactor(root).archive
            rel = probe + known
            assert archive.trusted_pointer("toolu_012345", earlier_text(rel)) == rel
            assert not archive.is_persisted(probe + "missing.txt")
            assert any("cut off" in p for p in archive.problems), archive.problems

        def rebuilt_lookup() -> None:
            (folder / INDEX).unlink(missing_ok=True)
            first_lookup()

        rebuilt = _best_ms(rebuilt_lookup, 3)  # leaves the index a run leaves behind
        assert len(Compactor(root).archive.manifest()) == RESULTS  # every entry indexed
        ms = _best_ms(first_lookup)
        count = iter(range(REPEATS))

        def first_append() -> None:
            archive = Compactor(root).archive
            archive.persist(f"toolu_new{next(count)}", "a new result")
            archive.flush()

        append = _best_ms(first_append)
    return [
        {"name": f"open a workspace of {RESULTS:,} results ({log_mb:.1f} MB log) and answer "
                 "its first trust lookup",
         "value": round(ms, 2), "unit": "ms", "target": OPEN_TARGET_MS,
         "baseline": round(base, 2), "ratio": round(ms / base, 1), "ok": ms < OPEN_TARGET_MS},
        {"name": "the same with no index (built from the whole log, torn line skipped)",
         "value": round(rebuilt, 1), "unit": "ms", "target": None, "baseline": None,
         "ratio": None, "ok": True},
        {"name": "first append in that workspace (persist one result, flush: lists the "
                 "folder for temp files a kill left)",
         "value": round(append, 1), "unit": "ms", "target": None, "baseline": None,
         "ratio": None, "ok": True},
    ]


WRITER = """
import sys
from pathlib import Path
from core.archive.store import Archive
archive = Archive(Path(sys.argv[1]))
block = "x" * 999 + "\\n"
i = 0
while True:
    archive.persist(f"toolu_{i}", f"{i}:" + block * (MB * 1000))
    for j in range(50):  # small results: written with no name, linked once whole
        archive.persist(f"toolu_{i}_{j}", f"{i}.{j}:" + block * 2)
    archive.flush()
    i += 1
"""


def check(workspace: Path) -> tuple[int, int]:
    """(files trusted or named but not whole, temporary files a kill left)."""
    folder = workspace / RESULTS_DIR
    if not folder.is_dir():
        return 0, 0
    bad = 0
    archive = Archive(workspace)
    for entry in archive.manifest().values():
        if not archive.intact(entry):
            bad += 1
    leftovers = 0
    for path in folder.iterdir():
        if path.name.endswith(".tmp"):
            leftovers += 1
        elif path.suffix == ".txt":
            digest = digest_bytes(path.read_bytes())
            if digest[:16] not in path.name:
                bad += 1
    return bad, leftovers


def kill_row() -> Row:
    rng = random.Random(20261203)
    bad = torn = writes = 0
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as tmp:
        for _ in range(KILL_ROUNDS):
            code = WRITER.replace("MB", str(KILL_MB))
            child = subprocess.Popen([sys.executable, "-c", code, tmp], cwd=ROOT)
            time.sleep(rng.uniform(0.4, 1.5))
            child.send_signal(signal.SIGKILL)
            child.wait()
            round_bad, leftovers = check(Path(tmp))
            bad += round_bad
            torn += leftovers
            writes = len(list((Path(tmp) / RESULTS_DIR).glob("*.txt")))
    return {"name": f"kill -9 during {KILL_MB} MB writes, {KILL_ROUNDS} rounds: files "
                    f"half-trusted ({writes} whole, {torn} temp files left for the sweep)",
            "value": bad, "unit": "", "target": "= 0", "baseline": None, "ratio": None,
            "ok": bad == 0}


def run() -> list[Row]:
    return [*open_rows(), kill_row()]


if __name__ == "__main__":
    for row in run():
        print(row)
