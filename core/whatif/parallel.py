"""The strategies of one comparison run side by side, one process per strategy.

Each strategy's walk is independent of the others' (its own engine, its own workspace, the
same read-only session), and each is CPU-bound Python, so threads would take turns on one
core: processes are what make a comparison finish in the time of its slowest strategies
rather than the sum of all of them.

The session (the recording and what was measured of it) is pickled once and handed to every
worker when it starts, which costs far less than each worker reading and measuring the file
again. The longest strategies are submitted first, so no long one starts last while the
other workers sit idle.

The caller keeps what it had when the strategies ran one after the other:

* the results in the order the strategies were asked for;
* one strategy's failure (even its worker dying) reported in its own row, the others run;
* the progress callback, called in the caller's process for every request of every
  strategy, in order within each strategy. Workers report at most every
  :data:`REPORT_EVERY` seconds how far they got; the caller fills in the requests in
  between, and completes a strategy's count from its result (a report still in the queue
  when the result arrives is not waited for);
* stopping at the next request: when the callback raises (the workbench's screen raises
  ``CancelledError`` once it is left), the workers are told through a shared event and stop
  at their next request, strategies not yet started never start, and the exception goes on
  to the caller.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import queue as queue_module
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.whatif.model import StrategyRun
from core.whatif.play import Session, play_engine, play_original
from core.whatif.strategies import ORIGINAL, STRATEGIES

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.synchronize import Event as EventType

REPORT_EVERY = 0.05  # seconds between a worker's progress reports
POLL = 0.02  # seconds the caller waits between looks at the queue and the results
# From the slowest to the fastest, as measured on a long session (docs/PERFORMANCE.md):
# the engines that archive and snip at every request first.
COST_ORDER = ("s08-window", "observation-masking", "api-clear-tool-uses", "s08", "truncate",
              "api-compaction", ORIGINAL)
# Below this many requests a comparison is over before the workers would have started.
PARALLEL_FROM_REQUESTS = 200


class Stopped(BaseException):
    """Raised in a worker at its next request once the caller has stopped the comparison
    (a BaseException, so no strategy takes it for its own failure)."""


def worker_count(names: Sequence[str], requests: int, processes: int | None) -> int:
    """How many processes to run ``names`` in: 1 means one after the other, here.

    ``processes`` None is automatic: one per strategy, at most one per core, and none for a
    short session or a single strategy. A number is the caller's, capped by the
    strategies."""
    if processes is not None:
        return max(1, min(processes, len(names)))
    if len(names) < 2 or requests < PARALLEL_FROM_REQUESTS:
        return 1
    return max(1, min(len(names), os.cpu_count() or 1))


def by_cost(names: Sequence[str]) -> list[str]:
    """``names``, the slowest first (an unknown cost goes first: it may be long)."""
    return sorted(names, key=lambda n: COST_ORDER.index(n) if n in COST_ORDER else -1)


def start_method() -> str:
    """``fork`` for a caller with one thread (the command line, the bench): nothing to
    import or run again in the worker. A caller running threads (the workbench) could have
    one of them holding a lock that the forked copy would wait on forever, so it gets
    ``forkserver`` (or ``spawn``), whose workers start clean; those import the caller's
    main module again, which ctxlab's entry point allows."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


# -- the worker's side ----------------------------------------------------------------------


@dataclass
class _Worker:
    """What a worker process was given when it started."""

    session: Session
    reports: Any  # multiprocessing queue of (strategy, request)
    stop: EventType


_WORKER: _Worker | None = None


def _start_worker(blob: bytes, reports: Any, stop: EventType) -> None:
    global _WORKER
    _WORKER = _Worker(pickle.loads(blob), reports, stop)


@dataclass
class _Reporter:
    """A worker's progress callback: stops when told, reports now and then."""

    worker: _Worker
    last: float = field(default_factory=time.monotonic)

    def __call__(self, name: str, request: int, total: int) -> None:
        if self.worker.stop.is_set():
            raise Stopped
        now = time.monotonic()
        if now - self.last >= REPORT_EVERY or request == total:
            self.last = now
            self.worker.reports.put((name, request))


def _play(name: str, workspace: str) -> StrategyRun:
    """One strategy, in a worker: the same walk as in the caller's process."""
    assert _WORKER is not None, "the worker was not started with a session"
    session = _WORKER.session
    options = replace(session.options, progress=_Reporter(_WORKER))
    session = replace(session, options=options)
    if name == ORIGINAL:
        return play_original(session)
    return asyncio.run(play_engine(session, name, Path(workspace)))


# -- the caller's side ----------------------------------------------------------------------


@dataclass
class _Progress:
    """The caller's view of every strategy's progress: each request told once, in order."""

    session: Session
    told: dict[str, int] = field(default_factory=dict)

    def upto(self, name: str, request: int) -> None:
        for index in range(self.told.get(name, 0) + 1, request + 1):
            self.told[name] = index
            self.session.progress(name, index)

    def drain(self, reports: Any) -> None:
        while True:
            try:
                name, request = reports.get_nowait()
            except queue_module.Empty:
                return
            self.upto(name, request)


def pool_context() -> BaseContext | None:
    """The multiprocessing context, or None where processes cannot be made here (no
    semaphores, a sandbox): the caller then runs the strategies one after the other."""
    try:
        context = multiprocessing.get_context(start_method())
        context.Event()  # needs the system's semaphores: fails early where they are missing
    except (OSError, ImportError, NotImplementedError, ValueError):
        return None
    return context


async def play_in_processes(session: Session, names: Sequence[str], root: Path,
                            workers: int, context: BaseContext) -> list[StrategyRun]:
    """Every strategy of ``names`` in a pool of ``workers`` processes; the runs in the
    order of ``names``."""
    reports = context.Queue()
    stop = context.Event()
    blob = pickle.dumps(replace(session, options=replace(session.options, progress=None)),
                        protocol=pickle.HIGHEST_PROTOCOL)
    progress = _Progress(session)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(blob, reports, stop)) as pool:
        futures = {name: pool.submit(_play, name, str(root / name)) for name in by_cost(names)}
        try:
            await _follow(futures, reports, progress)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [_run_of(name, futures[name]) for name in names]


async def _follow(futures: dict[str, Future[StrategyRun]], reports: Any,
                  progress: _Progress) -> None:
    """Tell the progress as it comes until every strategy has its result."""
    waiting = dict(futures)
    while waiting:
        progress.drain(reports)
        for name, future in list(waiting.items()):
            if future.done():
                del waiting[name]
                progress.drain(reports)
                if future.exception() is None:
                    progress.upto(name, len(future.result().requests))
        if waiting:
            await asyncio.sleep(POLL)


def _run_of(name: str, future: Future[StrategyRun]) -> StrategyRun:
    """The strategy's run, or a row saying why it has none (its worker died, say)."""
    error = future.exception()
    if error is None:
        return future.result()
    return StrategyRun(name, STRATEGIES.get(name, ""), (),
                       error=f"{type(error).__name__}: {error}")
