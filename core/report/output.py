"""Where a report goes: written whole (a reader sees the old file or the new one), and never
over a file that is not an earlier report unless the user said ``--force``.

``-o notes.html`` typed by mistake must not replace someone's page: a file that exists is
replaced only when it starts as a report does (its generator mark, :data:`GENERATOR`), and
nothing but a regular file is ever replaced.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.archive.atomic import atomic_write_text
from core.report.page import GENERATOR
from core.views.collect import SourceError

HEAD = 2_000  # the generator mark is in the page's first few hundred bytes


def is_report(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">'.encode() in head


def check_target(path: Path, force: bool) -> None:
    """:class:`SourceError` when ``path`` must not be replaced (before any work is done)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise SourceError(f"{path}: no folder {path.parent}") from None
        return
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{path}: exists and is not a regular file; nothing was written")
    if not force and not is_report(path):
        raise SourceError(f"{path}: exists and is not a ctxlab report; --force replaces it")


def write_report(path: Path, html: str, *, force: bool = False) -> None:
    check_target(path, force)
    atomic_write_text(path, html, errors="backslashreplace")
