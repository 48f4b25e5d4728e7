"""Atomic writes for the archive and the sessions, and the sweep of what a killed writer left.

A reader sees the old file or the new one, never half: the text goes to a hidden temporary
file in the same folder (``.<name>.<pid>.<n>.tmp``), then ``os.replace``. The pid in the
name lets the next process tell a killed writer's leftovers from a live writer's.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import threading
from pathlib import Path

_TMP_SERIAL = itertools.count()
_TMP_NAME = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")


def temp_name(path: Path) -> Path:
    """A hidden temporary name beside ``path`` that :func:`sweep_stale_temp` recognises."""
    folder, name = os.path.split(path)
    return Path(folder, f".{name}.{os.getpid()}.{next(_TMP_SERIAL)}.tmp")


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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes already encoded (the archive hashes them too).

    The folder is created only when the write finds it missing: one ``mkdir`` per file is
    a syscall too many when a stage writes hundreds of them.
    """
    tmp = temp_name(path)
    try:
        try:
            _write_new(tmp, data)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_temp_hashing(folder: Path, hint: str, data: bytes) -> tuple[Path, str]:
    """Write ``data`` to a new temporary file in ``folder`` while hashing it (sha256).

    For a result whose name is its hash: the bytes go to disk in a worker thread while this
    one hashes them (both release the interpreter lock), so the two cost about the longer
    of them, not their sum. The caller renames the file into place with ``os.replace`` or
    removes it; a kill before that leaves only a temporary file, which the sweep removes.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(folder / hint)
    failed: list[BaseException] = []

    def write() -> None:
        try:
            _write_new(tmp, data)
        except BaseException as exc:  # handed to the caller below
            failed.append(exc)

    writer = threading.Thread(target=write, name="archive-write", daemon=True)
    writer.start()
    try:
        digest = hashlib.sha256(data).hexdigest()
    finally:
        writer.join()
    if failed:
        _unlink(tmp)
        raise failed[0]
    return tmp, digest


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
