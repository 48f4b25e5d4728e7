"""The one atomic writer: how ctxlab replaces a file, and the sweep of what a killed writer left.

A reader sees the old file or the new one, never half: the bytes go to a hidden temporary
file in the same folder (``.<name>.<pid>.<n>.tmp``, so the rename stays on one filesystem),
then ``os.replace`` puts it over the target. Every file ctxlab writes whole goes through
here — the archive's results and transcripts, saved sessions and work logs, memory records,
``MEMORY.md`` and the consolidation journal, replay summaries, stage exports, the files the
model's tools write, a file redacted of secrets, bash's spool of a long output — in one of
two forms: :func:`atomic_write_text` / :func:`atomic_write_bytes` when the bytes are all at
hand, :func:`open_atomic` (an :class:`AtomicFile`: write pieces, then commit or abandon) when
they arrive a piece at a time or the file needs its mode set first. The archive's
``atomic_write_bytes`` of a new file skips the temporary name where the filesystem allows
(:mod:`core.archive.unnamed`: the file has no name until it is whole). Appended logs (the
archive's manifest, a watch's recording) are never replaced, so they do not come here.

Temp names stay within the folder's ``NAME_MAX``: a 255-byte name is legal, and adding
``.<pid>.<n>.tmp`` to it made the write fail, so the name part is shortened instead.

**Durability.** The rename alone survives a killed process. ``durable=True`` adds an fsync of
the temp file before the rename and of the folder after it, so the new file also survives a
power cut; it is for what cannot be made again — saved sessions and work logs, the memory
store, and a user's file written by ``write_file`` / ``edit_file`` or rewritten by
:func:`core.tools.secrets.redact_file`. The archive's result files and transcripts, replay
summaries and stage exports are not durable: a ``prepare()`` can write hundreds of result
files, and their fsyncs would cost more than the compaction itself. A power cut can cost
the newest of them (a damaged result no longer matches its hash in the manifest and is not
trusted; a summary or an export is made again); a killed process never can.

**The sweep.** It must tell a killed writer's leftovers from a live writer's. Asking whether
the pid in the name is alive (``kill(pid, 0)``) cannot: a writer in another PID namespace (a
container sharing the volume) has a pid this process cannot see, so its temp file looked
abandoned and was deleted mid-write. Instead the writer holds an exclusive ``flock`` on its
temp file from the moment it creates it until it is renamed or removed; the kernel drops
the lock when the writer dies, however it dies, and the lock is seen from every namespace
that shares the file. A temp file is swept only when its lock can be taken *and* it has not
changed for :data:`STALE_AFTER` seconds (the age covers the instant between creating the
file and locking it). Where locks are not available, only the age decides, and it is long.
A folder whose every writer holds one lock while it writes (the memory store's) is swept
under that lock, and there the age is not asked.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import time
from pathlib import Path
from types import TracebackType

from core.archive.unnamed import write_unnamed

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


def _create_temp(path: str | Path, mode: int = 0o644) -> tuple[str, int]:
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
        _hold_lock(fd)
        return tmp, fd


def _hold_lock(fd: int) -> None:
    """Mark an open temp file as being written (best effort: no lock means age decides)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass


class AtomicFile:
    """A temp file beside its target, created exclusively and locked, written a piece at a
    time, then committed (renamed over a target) or abandoned (removed).

    For bytes that do not exist all at once: a large result encoded and hashed a slice at a
    time, a command's output as it arrives, a file redacted as it is read, a user's file
    whose mode is set before its bytes. As a context manager it is abandoned on leaving the
    block uncommitted, so a failure part-way leaves neither a half file nor a temp file.
    """

    __slots__ = ("_fd", "_state", "durable", "tmp")

    def __init__(self, tmp: str, fd: int, durable: bool) -> None:
        self.tmp = tmp
        self.durable = durable
        self._fd: int | None = fd
        self._state = "open"  # then "released", "renamed" or "removed"

    @property
    def fd(self) -> int:
        """The open temp file (raw writes, ``fchmod``); only until commit, abandon or release."""
        if self._fd is None:
            raise ValueError(f"{self.tmp} is no longer open for writing")
        return self._fd

    def write(self, data: bytes) -> None:
        write_all(self.fd, data)

    def commit(self, target: str | Path) -> None:
        """Put the file in place of ``target`` (see the module's durability policy). On
        failure the temp file is removed and the error raised; ``target`` is untouched."""
        fd = self.fd
        self._fd, self._state = None, "removed"
        _commit(self.tmp, fd, os.fspath(target), self.durable)
        self._state = "renamed"

    def abandon(self) -> None:
        """Remove the temp file: nothing will use it (does nothing once it was renamed)."""
        if self._state in ("open", "released"):
            self._state = "removed"
            _unlink(self.tmp)  # before letting the lock go: locked until it is gone
        self._close()

    def release(self) -> str:
        """Stop writing and let the lock go, keeping the file for :func:`rename_finished`.

        For a file handed on by name (bash's spool, which the loop archives): it must be
        claimed promptly, since once unlocked and unchanged for :data:`STALE_AFTER` a sweep
        may take it."""
        self._close()
        if self._state == "open":
            self._state = "released"
        return self.tmp

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._state == "open" or (kind is not None and self._state == "released"):
            self.abandon()

    def __del__(self) -> None:
        """Dropped without a last call: no descriptor leaks (the file, unlocked, is then
        the sweep's)."""
        self._close()


def open_atomic(beside: str | Path, *, durable: bool, mode: int = 0o644) -> AtomicFile:
    """A new :class:`AtomicFile` in the folder of ``beside`` (whose name it is named after).

    ``mode`` is the new file's permission bits before the umask; ``durable`` says whether
    :meth:`AtomicFile.commit` syncs (see the module's docstring)."""
    tmp, fd = _create_temp(beside, mode)
    return AtomicFile(tmp, fd, durable)


def atomic_write_text(path: Path, text: str, *, durable: bool = False,
                      errors: str = "surrogatepass") -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half.

    The folder is made if missing. ``errors`` says what a lone surrogate becomes: kept
    byte-exact (the archive), or spelt as its escape (``backslashreplace``) where the file
    must stay valid UTF-8.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_replace(str(path), text.encode("utf-8", errors), durable)


def atomic_write_bytes(path: str, data: bytes, *,
                       durable: bool = False) -> os.stat_result | None:
    """:func:`atomic_write_text` for bytes already encoded (the archive hashes them too).

    Where the filesystem allows (and not ``durable``), the file is written with no name
    and linked to ``path`` once whole (:mod:`core.archive.unnamed`), and its ``stat`` is
    returned; otherwise (and when ``path`` exists) through a named temporary file, and None
    is returned. The folder
    is created only when the write finds it missing: one ``mkdir`` per file is a syscall
    too many when a stage writes hundreds of them.
    """
    try:
        return _write_new_or_replace(path, data, durable)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return _write_new_or_replace(path, data, durable)


def _write_new_or_replace(path: str, data: bytes, durable: bool) -> os.stat_result | None:
    done = None if durable else write_unnamed(path, data)
    if done is None:
        _write_replace(path, data, durable)
    return done


def rename_finished(tmp: str | Path, target: str | Path) -> None:
    """Put a temp file finished earlier (:meth:`AtomicFile.release`) in place of ``target``.

    Not durable: only the archive adopts files this way (see the module's docstring)."""
    os.replace(tmp, target)


def _write_replace(path: str, data: bytes, durable: bool) -> None:
    """The one-shot form, kept free of objects: the archive's hot path writes hundreds."""
    tmp, fd = _create_temp(path)
    try:
        write_all(fd, data)
    except BaseException:
        _unlink(tmp)
        os.close(fd)
        raise
    _commit(tmp, fd, path, durable)


def _commit(tmp: str, fd: int, target: str, durable: bool) -> None:
    """Where every temp file becomes its target: sync it if durable, rename it, and only
    then let its lock go; on failure remove it. The folder is synced after a durable rename,
    or the rename itself could be lost to a power cut."""
    try:
        try:
            if durable:
                os.fsync(fd)
            os.replace(tmp, target)
        finally:
            os.close(fd)
    except BaseException:
        _unlink(tmp)
        raise
    if durable:
        fsync_dir(os.path.dirname(target) or ".")


def fsync_dir(directory: str | Path) -> None:
    """Persist a change to a folder's entries (create, rename, unlink) where the OS allows."""
    try:
        fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` may write less than asked; loop until every byte is down (or it fails)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _unlink(path: str) -> None:
    """Remove a temp file, best effort: a cleanup that fails must not hide the error that
    made it necessary (the sweep takes what is left)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def sweep_stale_temp(folder: str | Path, *, writers_excluded: bool = False) -> list[str]:
    """Remove the temporary files a killed writer left in ``folder``; their names.

    Only files named by :func:`temp_name` that are provably abandoned are touched: their
    writer's lock is free and they are old (see the module's docstring); the real files
    never depend on them (the rename had not happened yet). ``writers_excluded`` says the
    caller holds the lock every writer of this folder holds while it writes, so no writer
    can be between creating a temp file and locking it, and the age is not asked.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        if is_temp_name(entry.name) and _remove_if_abandoned(entry.path, now,
                                                              writers_excluded):
            removed.append(entry.name)
    return removed


def _remove_if_abandoned(path: str, now: float, writers_excluded: bool) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if not writers_excluded and _age(info, now) < STALE_AFTER:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return False
    try:
        locked = _try_lock(fd)
        if locked is False:
            return False  # a live writer, whatever namespace its pid is in
        if locked is None and not writers_excluded and _age(info, now) < STALE_UNLOCKED_AFTER:
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
