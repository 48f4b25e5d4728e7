"""Benchmark of ``Compactor.prepare()`` against the course's cost model, in the same run.

The course re-serialises the whole history (``len(json.dumps(messages))``) before every block
that ``micro_compact`` and ``fit_tool_results`` visit, so its cost grows with blocks × bytes.
ctxlab keeps the same numbers with incremental size accounting. This bench measures both on
the history that hurts (24 turns of parallel 2 kB reads), on a session growing turn by turn,
on the common call that needs no stage, and on one huge fresh result.

Each case also has a *floor*: the physical cost of the files it must write on this machine
(the same bytes, each hashed with BLAKE3 as ctxlab hashes them, then written to a temporary
file and renamed). The course, ctxlab and the floor run in interleaved rounds (rotating
order, a fresh workspace each), on disk and in memory (``/dev/shm``) where there is one; a
row gives each one's median CPU time and the median and best of the per-round ratios, and
the load average when it ran. ctxlab's engine is given a listening sink, as a front end's.

Run: ``python bench/bench_compact.py``. ``run()`` returns the rows for an aggregating runner;
``ok`` says whether a row meets its ``target`` (rows without one are reported, always ok).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compact_table import markdown, print_table
from bench.course import COURSE_LIMIT, COURSE_TARGET, EARLIER, course_chars, course_prepare
from bench.rounds import load_average as system_load
from bench.rounds import per_round, rotations
from core.archive.content_hash import digest_bytes
from core.compact.pipeline import Compactor
from core.measure import Measured

TURNS = 24
PARALLEL = (8, 24, 40)
READ_CHARS = 2_000
SINGLE_MB = (1, 10, 50)
MB = 1_000_000
HEADLINE = f"{TURNS}×24"
HEADLINE_FLOOR = {"disk": 1.5, "tmpfs": 3.0}  # 24×24 within this many times the floor
SINGLE_FLOOR = 1.5  # a fresh 10 or 50 MB result within 1.5× the floor of writing, hashing it
REPEATS = 5  # interleaved rounds per case
NOOP_CALLS = 20  # a sub-millisecond call: timed over several calls per round
SESSION_TURNS = 300
SESSION_ROUNDS = 3
SESSION_CHARS = 400
SHM = "/dev/shm"

Row = dict[str, Any]


# -- inputs ---------------------------------------------------------------------------------


def _file_text(chars: int, seed: str) -> str:
    """Source-like text of exactly ``chars`` characters, different per ``seed``."""
    line = f"    total += compute(item, '{seed}')  # keep the loop tight\n"
    return (line * (chars // len(line) + 1))[:chars]


def parallel_reads(turns: int, per_turn: int, chars: int = READ_CHARS) -> list[dict]:
    """A request, then per turn one assistant batch of read_file calls and their results."""
    messages: list[dict] = [{"role": "user", "content": "Refactor the auth module."}]
    for t in range(turns):
        ids = [f"toolu_{t:02d}_{i:02d}" for i in range(per_turn)]
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": "read_file",
             "input": {"path": f"src/mod_{t}_{i}.py"}} for i, tid in enumerate(ids)]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": _file_text(chars, tid)}
            for tid in ids]})
    return messages


def single_result(chars: int) -> list[dict]:
    """One read whose result is ``chars`` long, just arrived (the budget stage's case)."""
    return [
        {"role": "user", "content": "Look at the log."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_big",
                                           "name": "read_file", "input": {"path": "app.log"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big",
                                      "content": _file_text(chars, "log")}]},
    ]


# -- timing: interleaved rounds -------------------------------------------------------------
# Each compared run (the course, ctxlab, the floor) runs once per round, in an order that
# rotates from round to round, each in a fresh workspace: on a shared machine the
# neighbours' load and the state of the page cache change from second to second, and only
# runs made side by side can be compared. A row reports the median of each run's times and
# the median and best of the per-round ratios. Times are CPU seconds of this process (its
# worker thread included): wall time on a shared 2-core machine mostly measures the others.

Timed = Callable[[Path], float]


def interleaved(runs: dict[str, Timed], rounds: int, root: str | None) -> dict[str, list[float]]:
    """``rounds`` seconds per run, each round running every run once in a rotated order,
    each in a fresh temporary folder under ``root`` (the system's default if None)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _, order in rotations(list(runs), rounds):
        for name in order:
            with tempfile.TemporaryDirectory(prefix="ctxlab-bench-", dir=root) as tmp:
                gc.collect()
                times[name].append(runs[name](Path(tmp)))
    return times


def ctxlab_run(messages: list[dict]) -> Timed:
    def once(workdir: Path) -> float:
        compactor = Compactor(workdir, emit=_listener())

        async def timed() -> float:
            # A running app's loop already has its worker thread; a fresh asyncio.run
            # would otherwise time the thread's creation too.
            await asyncio.to_thread(int)
            start = time.process_time()
            await compactor.prepare(messages, "Refactor the auth module.")
            return time.process_time() - start

        return asyncio.run(timed())

    return once


def _listener() -> Callable[[Any], None]:
    """A sink that keeps every event, as a front end does (so nothing an event needs can be
    skipped for a bench that listens to nobody)."""
    kept: list[Any] = []
    return kept.append


def course_run(messages: list[dict]) -> Timed:
    text = json.dumps(messages)

    def once(workdir: Path) -> float:
        copy = json.loads(text)  # the course mutates in place
        start = time.process_time()
        course_prepare(copy, workdir)
        return time.process_time() - start

    return once


def written_files(messages: list[dict]) -> list[tuple[str, bytes]]:
    """The files ctxlab's ``prepare()`` writes for ``messages`` (name and bytes)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as tmp:
        compactor = Compactor(Path(tmp))
        compactor.prepare_local(messages)
        folder = compactor.archive.results_dir
        return [(p.name, p.read_bytes()) for p in sorted(folder.glob("*.txt"))]


def floor_run(files: list[tuple[str, bytes]]) -> Timed:
    """Writing the same bytes under the same names, each through a temporary file and an
    ``os.replace``, each hashed with the algorithm the archive uses (BLAKE3): each file's
    bytes written whole under its name, and hashed as ctxlab hashes every file it writes.
    (ctxlab itself names a new file by a link where the filesystem allows, not a rename: the
    two cost the same within the noise, so the floor keeps the portable way.)"""
    def once(workdir: Path) -> float:
        folder = workdir / "tool-results"
        folder.mkdir()
        start = time.process_time()
        for name, data in files:
            digest_bytes(data)
            tmp = folder / f".{name}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, folder / name)
        return time.process_time() - start

    return once


# -- the cases ------------------------------------------------------------------------------


def places() -> list[tuple[str, str | None]]:
    """Where workspaces are made: the default temporary folder (on disk here), and memory
    (``/dev/shm``, tmpfs) when there is one."""
    found: list[tuple[str, str | None]] = [("disk", None)]
    if os.path.isdir(SHM) and os.access(SHM, os.W_OK):
        found.append(("tmpfs", SHM))
    return found


def load_average() -> float:
    """The 1-minute load average as the rows note it (-1 where the system has none)."""
    load = system_load()
    return -1.0 if load is None else round(load[0], 2)


def _row(name: str, times: dict[str, list[float]], target: str | None,
         ok: Callable[[float, float | None], bool], **extra: Any) -> Row:
    """A row from interleaved times: ``ok(course ÷ ctxlab median, ctxlab ÷ floor median)``."""
    ms = statistics.median(times["ctxlab"]) * 1e3
    base = statistics.median(times["course"]) * 1e3
    speed, _, speed_best = per_round(times["course"], times["ctxlab"])
    row: Row = {"name": name, "value": round(ms, 2), "unit": "ms", "target": target,
                "baseline": round(base, 2), "ratio": round(speed, 2),
                "ratio_best": round(speed_best, 2),
                "floor": None, "of_floor": None, "of_floor_best": None,
                "rounds": len(times["ctxlab"]), "load": load_average(), **extra}
    of_floor = None
    if "floor" in times:
        of_floor, best, _ = per_round(times["ctxlab"], times["floor"])
        row.update(floor=round(statistics.median(times["floor"]) * 1e3, 2),
                   of_floor=round(of_floor, 2), of_floor_best=round(best, 2))
    row["ok"] = ok(speed, of_floor)
    return row


def parallel_rows() -> list[Row]:
    rows = []
    for place, root in places():
        for per_turn in PARALLEL:
            messages = parallel_reads(TURNS, per_turn)
            name = f"{TURNS}×{per_turn}"
            rounds = REPEATS if name == HEADLINE else 3
            times = interleaved({"course": course_run(messages), "ctxlab": ctxlab_run(messages),
                                 "floor": floor_run(written_files(messages))}, rounds, root)
            if name == HEADLINE:
                limit = HEADLINE_FLOOR[place]
                target = f"≤ course, ≤ {limit:g}× floor"
                rows.append(_row(f"prepare {name} reads ({place})", times, target,
                                 lambda speed, of_floor, limit=limit:
                                 speed >= 1 and of_floor is not None and of_floor <= limit,
                                 mb=round(course_chars(messages) / MB, 2)))
            else:
                rows.append(_row(f"prepare {name} reads ({place})", times, "≤ course",
                                 lambda speed, _: speed >= 1,
                                 mb=round(course_chars(messages) / MB, 2)))
    return rows


def single_rows() -> list[Row]:
    rows = []
    for place, root in places():
        mine = []
        for size in SINGLE_MB:
            messages = single_result(size * MB)
            times = interleaved({"course": course_run(messages), "ctxlab": ctxlab_run(messages),
                                 "floor": floor_run(written_files(messages))}, REPEATS, root)
            bound = SINGLE_FLOOR if size >= 10 else None
            target = "≤ course" + (f", ≤ {bound:g}× floor" if bound else "")
            row = _row(f"prepare one fresh {size} MB result ({place})", times, target,
                       lambda speed, of_floor, bound=bound: speed >= 1 and (
                           bound is None or (of_floor is not None and of_floor <= bound)),
                       mb=size)
            row["ms_per_mb"] = round(row["value"] / size, 2)
            mine.append(row)
        per_mb = [row["ms_per_mb"] for row in mine]
        spread = max(per_mb) / min(per_mb)
        rows.extend(mine)
        rows.append({"name": f"ms/MB spread, {SINGLE_MB[0]}-{SINGLE_MB[-1]} MB ({place})",
                     "value": round(spread, 2), "unit": "×", "target": "diagnostic",
                     "baseline": None, "ratio": None, "ok": True})
    return rows


def noop_row() -> Row:
    """The common turn: ``prepare()`` called again on a history that needs no stage (under
    the trigger, nothing fresh over the budget). Both engines see it once, then the second
    call is timed; the course's cost model has nothing to keep between calls."""
    messages = parallel_reads(TURNS, 1, 1_500)
    assert course_chars(messages) < COURSE_LIMIT

    def ctxlab_once(workdir: Path) -> float:
        compactor = Compactor(workdir, emit=_listener())
        sent = asyncio.run(compactor.prepare(messages, "Refactor the auth module."))

        async def timed() -> float:
            start = time.process_time()
            for _ in range(NOOP_CALLS):
                await compactor.prepare(sent, "Refactor the auth module.")
            return (time.process_time() - start) / NOOP_CALLS

        return asyncio.run(timed())

    text = json.dumps(messages)

    def course_once(workdir: Path) -> float:
        sent = course_prepare(json.loads(text), workdir)
        start = time.process_time()
        for _ in range(NOOP_CALLS):
            course_prepare(sent, workdir)
        return (time.process_time() - start) / NOOP_CALLS

    times = interleaved({"course": course_once, "ctxlab": ctxlab_once}, REPEATS, None)
    return _row(f"second prepare, {len(messages)} messages, no stage runs", times,
                "≤ course", lambda speed, _: speed >= 1)


def growing_turn(t: int) -> list[dict]:
    """Turn ``t`` of a growing session: one read and its short result (``SESSION_CHARS``):
    from turn 25 the history is past 50 messages and snip archives its middle every turn
    (a transcript and a manifest flush), while it stays under the trigger."""
    tid = f"toolu_g{t:03d}"
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": tid,
                                               "name": "read_file",
                                               "input": {"path": f"src/m{t}.py"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                          "content": _file_text(SESSION_CHARS, tid)}]}]


def session_row(turns: int = SESSION_TURNS) -> Row:
    """A session growing by one read per turn for ``turns`` turns, ``prepare()`` before every
    model call, the course's and ctxlab's side by side turn by turn (order alternating), each
    in its own workspace; per round, each engine's median turn, and their ratio."""
    fresh = [growing_turn(t) for t in range(turns)]
    medians: dict[str, list[float]] = {"course": [], "ctxlab": []}
    for turn in range(SESSION_ROUNDS):
        with tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as a, \
                tempfile.TemporaryDirectory(prefix="ctxlab-bench-") as b:
            spent = asyncio.run(_session(fresh, turn, Path(a), Path(b)))
        for name in medians:
            medians[name].append(statistics.median(spent[name]))
    return _row(f"{turns}-turn growing session, per-turn median", medians, "≤ course",
                lambda speed, _: speed >= 1)


ORDERS = [order for _, order in rotations(("ctxlab", "course"), 2)]  # turn by turn


async def _session(fresh: list[list[dict]], turn: int, ours_at: Path,
                   theirs_at: Path) -> dict[str, list[float]]:
    compactor = Compactor(ours_at, emit=_listener())
    ours: list[dict] = [{"role": "user", "content": "Refactor the auth module."}]
    theirs = json.loads(json.dumps(ours))
    spent: dict[str, list[float]] = {"course": [], "ctxlab": []}
    await asyncio.to_thread(int)
    for t, added in enumerate(fresh):
        for name in ORDERS[(t + turn) % 2]:
            if name == "ctxlab":
                start = time.process_time()
                ours = await compactor.prepare([*ours, *added], "Refactor the auth module.")
            else:
                copy = json.loads(json.dumps(added))
                start = time.process_time()
                theirs = course_prepare([*theirs, *copy], theirs_at)
            spent[name].append(time.process_time() - start)
    return spent


def micro_steps(messages: list[dict]) -> list[tuple[int, int, str]]:
    """The replacements micro_compact makes on ``parallel_reads`` (seen results, oldest first)."""
    seen = [(mi, bi, block["tool_use_id"]) for mi, m in enumerate(messages[:-1])
            if m["role"] == "user" and isinstance(m["content"], list)
            for bi, block in enumerate(m["content"])]
    return [(mi, bi, f"{EARLIER}.task_outputs/tool-results/{tid}.txt]")
            for mi, bi, tid in seen[:-3]]


def accounting_row(per_turn: int = 24) -> Row:
    """Size accounting alone, no files: where the course's quadratic cost lives."""
    messages = parallel_reads(TURNS, per_turn)
    steps = micro_steps(messages)
    text = json.dumps(messages)

    def incremental(_: Path) -> float:
        start = time.process_time()
        history = Measured(list(messages))
        for mi, bi, new in steps:
            if history.chars <= COURSE_TARGET:
                break
            history.set_content(mi, bi, new)
        return time.process_time() - start

    def full_dumps(_: Path) -> float:
        copy = json.loads(text)
        start = time.process_time()
        for mi, bi, new in steps:
            if course_chars(copy) <= COURSE_TARGET:
                break
            copy[mi]["content"][bi]["content"] = new
        return time.process_time() - start

    times = interleaved({"course": full_dumps, "ctxlab": incremental}, 3, None)
    return _row(f"size accounting only {TURNS}×{per_turn}", times, "diagnostic",
                lambda speed, _: True)


def run() -> list[Row]:
    """All rows: the parallel-read cases (on disk and in memory), the accounting alone, the
    no-op call, the growing session, the fresh large results and their linearity."""
    return [*parallel_rows(), accounting_row(), noop_row(), session_row(), *single_rows()]


# -- output ---------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """Print the table (``--markdown``: for docs/PERFORMANCE.md); exit 1 if a target fails."""
    rows = run()
    if "--markdown" in argv:
        print(markdown(rows))
    else:
        print_table(rows, load_average())
    return 0 if all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
