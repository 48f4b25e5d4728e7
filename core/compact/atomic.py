"""Atomic writes for the archive and the sessions, and the sweep of what a killed writer left.

A reader sees the old file or the new one, never half: the text goes to a hidden temporary
file in the same folder (``.<name>.<pid>.<n>.tmp``), then ``os.replace``. The pid in the
name lets the next process tell a killed writer's leftovers from a live writer's.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

_TMP_SERIAL = itertools.count()
_TMP_NAME = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")


def temp_name(path: str | Path) -> str:
    """A hidden temporary name beside ``path`` that :func:`sweep_stale_temp` recognises.

    Strings, not ``Path``: a stage can write hundreds of files, and building path objects
    cost more per file than the system calls."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{os.getpid()}.{next(_TMP_SERIAL)}.tmp")


def atomic_write_text(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    ``os.replace`` alone survives a killed process; ``durable`` adds an fsync for data that
    must also survive a power cut (sessions). Archive files skip it: hundreds of fsyncs per
    ``prepare()`` would cost more than all of the compaction itself.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        with open(tmp, "x", encoding="utf-8", errors="surrogatepass", newline="") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_bytes(path: str, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes already encoded (the archive hashes them too).

    The folder is created only when the write finds it missing: one ``mkdir`` per file is
    a syscall too many when a stage writes hundreds of them.
    """
    tmp = temp_name(path)
    try:
        try:
            _write_new(tmp, data)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sweep_stale_temp(folder: Path) -> list[str]:
    """Remove temporary files left by a process that was killed mid-write.

    Only files named by :func:`temp_name` whose writer is gone are touched; the real files
    never depend on them (``os.replace`` had not happened yet).
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TMP_NAME.match(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
