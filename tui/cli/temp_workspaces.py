"""Temporary workspaces this process made, removed however the process ends.

The workbench and ``run --headless`` play scenarios in ``/tmp/ctxlab-…`` copies. A normal
exit removes them (the app's unmount, the command's ``finally``), but closing the terminal
sends SIGHUP and ``kill`` sends SIGTERM, whose default action ends the process on the spot —
no unmount, no ``finally`` — and every such exit left a workspace behind. Here every
temporary workspace is registered when it is made, and a SIGHUP/SIGTERM handler removes
them all before the process ends with that signal's usual status.

A workspace the user asked to keep (``--keep``) or named (``--workspace``) is never
registered, so it is never removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

_PATHS: list[Path] = []
SERVED_ENV = "CTXLAB_SERVED"  # set by ``ctxlab serve`` for each demo it starts
CLEANUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM")
                        if hasattr(signal, name))


def make_temp_workspace(prefix: str) -> Path:
    """A fresh ``/tmp/<prefix>XXXX`` directory, removed at exit or on SIGHUP/SIGTERM."""
    path = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    _PATHS.append(path)
    return path


def tracked(path: Path) -> bool:
    """Whether ``path`` is a registered temporary workspace."""
    return path in _PATHS


def forget(path: Path) -> None:
    """Keep ``path`` after all (``--keep``)."""
    with contextlib.suppress(ValueError):
        _PATHS.remove(path)


def remove_all() -> list[Path]:
    """Remove every registered workspace (a writer racing the removal gets a second pass)."""
    removed = []
    while _PATHS:
        path = _PATHS.pop()
        for _ in range(3):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                break
        removed.append(path)
    return removed


def remove(path: Path) -> None:
    """Remove one registered workspace now."""
    forget(path)
    shutil.rmtree(path, ignore_errors=True)


def leave(path: Path, keep: bool) -> str:
    """Keep ``path`` (``--keep``) or remove it now, and the line that says which: every
    command that made a temporary folder ends with it, so none is left behind unsaid."""
    if keep:
        forget(path)
        return f"workspace kept: {path}"
    remove(path)
    return f"workspace {path} removed (--keep keeps it)"


def install_signal_cleanup(before_exit: Callable[[int], None] | None = None) -> None:
    """On SIGHUP/SIGTERM: remove the workspaces, then end as that signal would have.

    ``before_exit`` (e.g. restoring the terminal) runs between the two and may not stop the
    exit. The process re-raises the signal with its default action, so a parent sees the
    usual "killed by SIGTERM" status.
    """

    def handler(signum: int, _frame: object) -> None:
        remove_all()
        if before_exit is not None:
            with contextlib.suppress(Exception):
                before_exit(signum)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in CLEANUP_SIGNALS:
        signal.signal(sig, handler)


def exit_when_orphaned(interval: float = 1.0) -> None:
    """End this process (workspaces removed) as soon as its parent is gone.

    A served demo talks to its server over pipes; if the server is killed outright (SIGKILL,
    a crash) nothing tells the demo, which is reparented and would run — and keep its
    workspace — forever. A daemon thread polls the parent id and, when it changes, removes
    the workspaces and exits at once (no terminal to restore: there is none).
    """
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        remove_all()
        os._exit(1)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()
