"""Atomic writes for the archive and the sessions, and the sweep of what a killed writer left.

A reader sees the old file or the new one, never half: the text goes to a hidden temporary
file in the same folder (``.<name>.<pid>.<n>.tmp``), then ``os.replace``.

The sweep must tell a killed writer's leftovers from a live writer's. Asking whether the pid
in the name is alive (``kill(pid, 0)``) cannot: a writer in another PID namespace (a
container sharing the volume) has a pid this process cannot see, so its temp file looked
abandoned and was deleted mid-write. Instead the writer holds an exclusive ``flock`` on its
temp file from the moment it creates it until it is renamed or removed; the kernel drops
the lock when the writer dies, however it dies, and the lock is seen from every namespace
that shares the file. A temp file is swept only when its lock can be taken *and* it has not
changed for :data:`STALE_AFTER` seconds (the age covers the instant between creating the
file and locking it). Where locks are not available, only the age decides, and it is long.

A temp name stays within the folder's ``NAME_MAX``: a 255-byte name is legal, and adding
``.<pid>.<n>.tmp`` to it made the write fail, so the name part is shortened instead.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # no flock (Windows): the sweep goes by age alone
    fcntl = None  # type: ignore[assignment]  # None stands for the module Windows lacks

_TMP_SERIAL = itertools.count()
_TMP_NAME = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")
STALE_AFTER = 60.0  # seconds unchanged, with the lock free, before a temp file is swept
STALE_UNLOCKED_AFTER = 24 * 3600.0  # the same where no lock can be taken at all
NAME_MAX_FALLBACK = 255
_NAME_MAX: dict[str, int] = {}
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def name_max(folder: str) -> int:
    """The longest file name (in bytes) the folder's filesystem takes, remembered per folder.

    A folder that does not exist yet is asked through its nearest existing parent (and not
    remembered); 255 when the system cannot say."""
    known = _NAME_MAX.get(folder)
    if known is not None:
        return known
    probe = folder or "."
    while True:
        try:
            value = int(os.pathconf(probe, "PC_NAME_MAX"))
        except FileNotFoundError:
            parent = os.path.dirname(probe.rstrip(os.sep)) or "."
            if parent == probe:
                return NAME_MAX_FALLBACK
            probe = parent
            continue
        except (OSError, ValueError, AttributeError):
            value = NAME_MAX_FALLBACK
        value = value if value > 0 else NAME_MAX_FALLBACK
        if probe == (folder or "."):
            _NAME_MAX[folder] = value
        return value


def fit_name(folder: str, name: str, extra: int) -> str:
    """``name`` shortened (at a character boundary) so that ``extra`` more bytes still fit."""
    limit = name_max(folder) - extra
    if len(name) * 4 <= limit:  # no character is more than 4 bytes: it fits as it is
        return name
    raw = os.fsencode(name)
    if len(raw) <= limit:
        return name
    cut = max(limit, 1)
    while cut > 1 and (raw[cut] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
        cut -= 1
    return os.fsdecode(raw[:cut])


def is_temp_name(name: str) -> bool:
    """Is ``name`` one of :func:`temp_name`'s (a write in progress or abandoned)?"""
    return _TMP_NAME.match(name) is not None


def temp_name(path: str | Path) -> str:
    """A hidden temporary name beside ``path`` that :func:`sweep_stale_temp` recognises.

    Strings, not ``Path``: a stage can write hundreds of files, and building path objects
    cost more per file than the system calls."""
    folder, name = os.path.split(os.fspath(path))
    suffix = f".{os.getpid()}.{next(_TMP_SERIAL)}.tmp"
    return os.path.join(folder, "." + fit_name(folder, name, len(suffix) + 1) + suffix)


def create_temp(path: str | Path, mode: int = 0o644) -> tuple[str, int]:
    """A new temp file beside ``path``, created exclusively and locked: its name and fd.

    The lock is held as long as the descriptor is open; close it only after the rename (or
    the unlink). A name already taken — the same pid in another PID namespace — is skipped.
    """
    while True:
        tmp = temp_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode)
        except FileExistsError:
            continue
        hold_lock(fd)
        return tmp, fd


def hold_lock(fd: int) -> None:
    """Mark an open temp file as being written (best effort: no lock means age decides)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass


def atomic_write_text(path: Path, text: str, *, durable: bool = False,
                      errors: str = "surrogatepass") -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    ``os.replace`` alone survives a killed process; ``durable`` adds an fsync for data that
    must also survive a power cut (sessions). Archive files skip it: hundreds of fsyncs per
    ``prepare()`` would cost more than all of the compaction itself. ``errors`` says what a
    lone surrogate becomes: kept byte-exact (the archive), or spelt as its escape
    (``backslashreplace``) where the file must stay valid UTF-8.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_replace(str(path), text.encode("utf-8", errors), durable)


def atomic_write_bytes(path: str, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes already encoded (the archive hashes them too).

    The folder is created only when the write finds it missing: one ``mkdir`` per file is
    a syscall too many when a stage writes hundreds of them.
    """
    try:
        _write_replace(path, data, False)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _write_replace(path, data, False)


def _write_replace(path: str, data: bytes, durable: bool) -> None:
    tmp, fd = create_temp(path)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
            os.replace(tmp, path)
        finally:
            os.close(fd)  # after the rename: the temp is locked until it is gone
    except BaseException:
        _unlink(tmp)
        raise


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` may write less than asked; loop until every byte is down (or it fails)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sweep_stale_temp(folder: Path) -> list[str]:
    """Remove temporary files left by a process that was killed mid-write.

    Only files named by :func:`temp_name` that are provably abandoned are touched (their
    writer's lock is free and they are old, see the module's docstring); the real files
    never depend on them (``os.replace`` had not happened yet).
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        if is_temp_name(entry.name) and _remove_if_abandoned(entry.path, now):
            removed.append(entry.name)
    return removed


def _remove_if_abandoned(path: str, now: float) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or _age(info, now) < STALE_AFTER:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return False
    try:
        locked = _try_lock(fd)
        if locked is False:
            return False  # a live writer, whatever namespace its pid is in
        if locked is None and _age(info, now) < STALE_UNLOCKED_AFTER:
            return False  # no lock to ask: only a much older file counts as abandoned
        mine, there = os.fstat(fd), os.lstat(path)
        if (mine.st_dev, mine.st_ino) != (there.st_dev, there.st_ino):
            return False  # replaced meanwhile
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool | None:
    """True: the lock was free (now ours); False: a writer holds it; None: no locks here."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def _age(info: os.stat_result, now: float) -> float:
    return now - info.st_mtime  # set on creation and by every write
