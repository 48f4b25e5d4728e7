"""``ctxlab report``: the time to build the HTML page of a long session, and its size.

Sessions come from :mod:`bench.sessions` (real-shaped Claude Code sessions with auto-compact
boundaries), at 3 MB and 30 MB. For each:

* **build** — the report made from the file, as ``ctxlab report`` does: the session replayed
  beside ctxlab's pipeline (events kept), folded per request, every turn diff, the page
  rendered and written atomically; CPU seconds of this process (on a shared machine wall
  time mostly measures the neighbours). **Baseline**: the plain headless replay of the same
  file with the same options, events discarded, in the same run. **Floor**: the page's own
  bytes written once through a temporary file and a rename, and hashed once (BLAKE3): what
  writing any file that size costs. Target: within 2× the replay;
* **size** of the page, against the session's — target: a page a browser opens at once
  (quotes capped by :mod:`core.report.caps`, so it grows with the number of requests, not
  with what they held).

Run: ``python bench/bench_report.py``; ``run()`` returns the rows for ``python -m bench``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sessions import write_session
from core.archive.content_hash import digest_bytes
from core.providers.registry import OFFLINE, make_summarizer
from core.report import build, collect, render, write_report
from core.sources.replay import load_recording
from core.sources.replay.limits import LimitMode
from core.sources.replay.source import ReplayOptions, ReplaySource

SIZES_MB = (3, 30)
MB = 1_000_000
BUILD_OF_REPLAY = 2.0  # the report within 2× the replay it is made from
SIZE_TARGET_MB = {3: 2.0, 30: 8.0}

Row = dict[str, Any]


def time_replay(path: Path, workdir: Path) -> float:
    """CPU seconds of the plain headless replay (the report's own options), events dropped."""
    start = time.process_time()
    recording = load_recording(path, max_bytes=100 * MB)
    summarizer, _ = make_summarizer(OFFLINE)
    options = ReplayOptions(workdir=workdir, limits=LimitMode.WINDOW, summarizer=summarizer,
                            seekable=False)
    if not asyncio.run(ReplaySource(recording, options).run(lambda event: event)):
        raise RuntimeError(f"the replay of {path} failed")
    return time.process_time() - start


def time_report(path: Path, out: Path) -> tuple[float, bytes]:
    """CPU seconds of the whole report, and the page it wrote."""
    start = time.process_time()
    html = render(build(collect(str(path))))
    write_report(out, html, force=True)
    return time.process_time() - start, out.read_bytes()


def time_floor(data: bytes, folder: Path) -> float:
    """The page's bytes hashed once and written once through a temporary file + rename."""
    start = time.process_time()
    digest_bytes(data)
    tmp, target = folder / ".floor.tmp", folder / "floor.html"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return time.process_time() - start


def run() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-report-") as tmp:
        root = Path(tmp)
        for mb in SIZES_MB:
            folder = root / f"s{mb}"
            folder.mkdir()
            session = write_session(folder, mb * MB)
            size = session.stat().st_size / MB
            base = time_replay(session, folder / "replay")
            seconds, page = time_report(session, folder / "report.html")
            floor = time_floor(page, folder)
            rows.append({"name": f"build the report of a {size:.1f} MB session (CPU)",
                         "value": round(seconds, 2), "unit": "s",
                         "target": f"≤ {BUILD_OF_REPLAY:g}× the replay",
                         "baseline": round(base, 2), "ratio": round(seconds / base, 2),
                         "floor": round(floor, 3), "of_floor": round(seconds / floor, 1),
                         "ok": seconds <= BUILD_OF_REPLAY * base})
            page_mb = len(page) / MB
            rows.append({"name": f"report size, {size:.1f} MB session", "value":
                         round(page_mb, 2), "unit": "MB", "target": SIZE_TARGET_MB[mb],
                         "baseline": round(size, 1), "ratio": round(page_mb / size, 2),
                         "ok": page_mb < SIZE_TARGET_MB[mb]})
            session.unlink()
    return rows


if __name__ == "__main__":
    for row in run():
        mark = "ok" if row["ok"] else "MISSED"
        print(f"{row['name']:<52} {row['value']!s:>8} {row['unit']:<3} "
              f"baseline {row['baseline']!s:>8} floor {row.get('floor')!s:>7} {mark}")
