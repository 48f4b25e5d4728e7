"""The harness's own folders in a workspace, checked so that no write of ctxlab's leaves it.

A workspace can arrive with links in it (a cloned repository can ship them): a
``.task_outputs`` that is a symlink to ``/home/me`` would make every archive write land
there, and a ``manifest.jsonl`` linked to a shell rc file would have every flush appended
to it. So every folder ctxlab writes into (``.task_outputs/``, ``.transcripts/``,
``.memory/``, ``.ctxlab/`` and what lies under them) is reached component by component from
the workspace: each one must be a real directory, not a link, and the result must still lie
inside the workspace's real path. Files ctxlab appends to or opens in place (the manifest
log, its lock and index) are opened with ``O_NOFOLLOW``. A folder or file that fails is
refused with one line naming it; nothing the user had is removed or rewritten.

The workspace itself may be reached through a link (``/tmp`` is one on some systems): the
check starts at its real path.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core.untrusted import file_kind

HARNESS_FOLDERS = (".task_outputs", ".transcripts", ".memory", ".ctxlab")


class HarnessPathError(OSError):
    """A harness folder or file is a link or leads outside the workspace; one line says which."""


def harness_dir(workspace: str | Path, relative: str | Path, *, create: bool = True) -> Path:
    """``workspace/relative`` once every component below the workspace is a real directory.

    Missing components are created (with ``create``), one at a time, so a link planted
    between two of them is met before anything is written through it. The returned path is
    spelt from the workspace's real path.
    """
    root = Path(os.path.realpath(workspace))
    current = root
    for part in Path(relative).parts:
        if part in ("", ".", "..") or os.sep in part:
            raise HarnessPathError(f"{relative}: not a folder inside the workspace")
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                return root / relative
            try:
                os.mkdir(current)
            except FileExistsError:
                pass  # made by another process meanwhile: checked below like any other
            info = os.lstat(current)
        _check_folder(current, info, root)
    return current


FolderKey = tuple[tuple[int, int, int], ...]


def folder_key(checked: Path, depth: int) -> FolderKey | None:
    """What the last ``depth`` components of a folder :func:`harness_dir` returned are, by
    ``lstat`` alone: (device, inode, mode) each, or ``None`` when one is gone.

    A writer that keeps a folder across many writes compares this before each one: a
    component swapped for a link (by the model's own ``bash``, say) changes its key, and
    then the full check runs again. A few ``lstat`` calls instead of a ``realpath`` walk.
    """
    key = []
    path = checked
    for _ in range(depth):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        key.append((info.st_dev, info.st_ino, info.st_mode))
        path = path.parent
    return tuple(key)


def _check_folder(path: Path, info: os.stat_result, root: Path) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise HarnessPathError(
            f"{path} is a symbolic link (to {os.readlink(path)}); ctxlab writes its own files "
            "only inside the workspace: remove the link or use another workspace")
    if not stat.S_ISDIR(info.st_mode):
        raise HarnessPathError(f"{path} is not a folder; ctxlab keeps its own files there: "
                               "move it away or use another workspace")
    if not Path(os.path.realpath(path)).is_relative_to(root):  # a bind mount, say
        raise HarnessPathError(f"{path} leads outside the workspace; ctxlab will not write there")


def check_harness_file(path: str | Path) -> None:
    """Refuse a harness file that is a link or not a regular file (missing is fine)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise HarnessPathError(f"{path} is a symbolic link (to {os.readlink(path)}); ctxlab "
                               "does not write through links: remove it")
    if not stat.S_ISREG(info.st_mode):
        raise HarnessPathError(f"{path} is {file_kind(info.st_mode)}, not a regular file; "
                               "ctxlab will not write to it")


def open_no_follow(path: str | Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that refuses a link in the last component (``O_NOFOLLOW``) and non-files.

    ``O_NONBLOCK`` keeps a FIFO planted under the name from blocking the open; the descriptor
    is refused unless it is a regular file.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
                     mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HarnessPathError(f"{path} is a symbolic link; ctxlab does not write through "
                                   "links: remove it") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HarnessPathError(f"{path} is not a regular file; ctxlab will not use it")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
