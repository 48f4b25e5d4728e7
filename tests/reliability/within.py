"""The command line run with a deadline, so a read that hangs fails its test instead of the
whole suite. Used for FIFOs and devices given where a file is expected."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

from tui.cli import main


def main_within(argv: list[str], seconds: float = 10.0,
                fifos: tuple[Path, ...] = ()) -> int:
    """``main(argv)``'s exit code; AssertionError if it has not returned in ``seconds``.

    On a timeout each FIFO in ``fifos`` is opened for writing and closed, so a reader
    blocked on it sees the end of the file and the worker thread can finish.
    """
    result: list[int | BaseException] = []

    def work() -> None:
        try:
            result.append(main(argv))
        except BaseException as exc:  # reported by the caller, with its type
            result.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in fifos:
            _release(fifo)
        worker.join(5)
        raise AssertionError(f"ctxlab {' '.join(argv[:1])} still running after {seconds} s")
    (outcome,) = result
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _release(fifo: Path) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.stat(fifo).st_mode):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
