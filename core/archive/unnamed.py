"""A new file that has no name until it is whole: ``O_TMPFILE``, then a link to its name.

The archive writes hundreds of small result files in one ``prepare()``. Through a named
temporary file each costs a ``getpid`` for the name, a lock so another process's sweep knows
the writer is alive, and a rename. Opened with ``O_TMPFILE`` the file is an inode in the
folder with no name at all: no other process can see or sweep it, a kill before the link
frees it (nothing is left behind), and ``linkat`` gives it its name only once every byte is
written — the same all-or-nothing visibility as temp+rename, in fewer system calls
(docs/PERFORMANCE.md, "Compaction").

``linkat`` never replaces an existing name, and not every filesystem (nor every system) has
``O_TMPFILE``: in either case :func:`write_unnamed` says it did nothing, and the caller writes
through a named temporary file as before (:mod:`core.archive.atomic`). A folder whose
filesystem refused once is not asked again.
"""

from __future__ import annotations

import errno
import os

_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
# ``os.link`` calls ``linkat`` (following the ``/proc/self/fd/N`` link to the inode) only when
# a folder descriptor is given; the source path is absolute, so the descriptor given is unused.
_LINKAT = _O_TMPFILE != 0 and os.link in os.supports_dir_fd
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_REFUSED = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOTSUP)
_unsupported: set[str] = set()  # folders whose filesystem (or system) cannot do it


def _link(fd: int, path: str) -> None:
    """Give the unnamed file open as ``fd`` the name ``path`` (``FileExistsError`` if taken)."""
    os.link(f"/proc/self/fd/{fd}", path, src_dir_fd=fd, follow_symlinks=True)


def write_unnamed(path: str, data: bytes) -> os.stat_result | None:
    """Write ``data`` as a new file named ``path``; its ``stat`` once named, or None when
    nothing was written (no ``O_TMPFILE`` here, or ``path`` exists already).

    A missing folder raises ``FileNotFoundError`` (the caller makes it and asks again)."""
    folder = os.path.dirname(path) or "."
    if not _LINKAT or folder in _unsupported:
        return None
    try:
        fd = os.open(folder, _O_TMPFILE | os.O_WRONLY | _CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno in _REFUSED:
            _unsupported.add(folder)
            return None
        raise
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        try:  # through /proc: linkat(AT_EMPTY_PATH) would need a privilege
            _link(fd, path)
        except FileExistsError:
            return None  # never replaces: the caller's rename does
        except OSError:  # no /proc, or a filesystem that refuses the link
            _unsupported.add(folder)
            return None
        return os.fstat(fd)  # after the link: its ctime is the named file's
    finally:
        os.close(fd)
