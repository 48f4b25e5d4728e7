"""Durable file operations for the memory store: atomic writes and a journaled replace.

Memory files are shared by the agent, a second ctxlab and a person's editor, so a write
must never leave a half-written file, and a consolidation (which removes many files and
writes many others) must never leave a mix of old and new records if the process dies.

* :func:`atomic_write` is ctxlab's one atomic writer (:mod:`core.archive.atomic`: a hidden
  temp file in the same directory, within NAME_MAX), durable (the file and the folder are
  fsynced), with a :func:`checkpoint` before the rename: readers see the old bytes or the
  new, never a torn file. Temp files a kill left are swept on the next open, by the
  writer's own sweep, under the store lock.
* :func:`commit_replace` first copies the files it will remove into
  ``.history/<timestamp>/old/`` and stages the new ones in ``.history/<timestamp>/new/``,
  then writes ``.journal.json`` (the commit point) and only then touches the live files.
  Killed before the journal exists, the live store is untouched (the old set); killed
  after, :func:`recover` rolls the replace forward on the next open (the new set).
  The snapshot folder itself is built hidden (``.history/.tmp-…``) and renamed into place
  once complete, so a failed or killed consolidation never leaves a partial snapshot that
  counts toward the 20 kept; it never writes over a file it did not read (a concurrent
  writer's new record).

Why a snapshot *folder* is published by its own rename and swept by its own sweep, not the
atomic writer's: that scheme protects one file written through one descriptor, whose lock
lives exactly as long as the write; a snapshot is many files (each written by
:func:`atomic_write`), and its build and its sweep both happen under the store lock, which
already tells a live builder from a dead one. What a kill leaves is a tree, removed whole,
while the writer's sweep deliberately unlinks regular files only and never walks into a
folder. And the name must stay ``.tmp-…``, which snapshots left by older versions carry.

``.history`` is reached through :func:`core.harness_paths.harness_dir` (a link planted
there would have snapshots written, swept and pruned outside the workspace), and every
file in the store is read through :func:`core.untrusted.read_limited`: the files are
hand-editable, and a FIFO or a device under a record's or the journal's name must be
refused, never waited on.

:func:`checkpoint` is called between every durable step so a test can stop the process at
step N and prove the claim above.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.archive.atomic import fsync_dir, open_atomic, sweep_stale_temp
from core.harness_paths import harness_dir
from core.memory.record import MAX_RECORD_BYTES
from core.untrusted import UntrustedFileError, read_limited

JOURNAL_NAME = ".journal.json"
HISTORY_DIR = ".history"
HISTORY_KEEP = 20
HISTORY_TMP_PREFIX = ".tmp-"  # a snapshot being built; renamed into place when complete
MANIFEST_NAME = "manifest.json"

# Called with a step label before every durable step. Tests install a hook that stops the
# process at a chosen step; it is None in normal runs.
FAULT_HOOK: Callable[[str], None] | None = None


class JournalError(RuntimeError):
    """A journal exists but cannot be applied (unreadable or tampered with)."""


def checkpoint(step: str) -> None:
    """Mark a point between durable steps (see the module docstring)."""
    if FAULT_HOOK is not None:
        FAULT_HOOK(step)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers never see a partial file, even after a
    power cut (the one atomic writer, durable).

    The temp file is a dotfile in the same directory, so listing and the watcher ignore it,
    and short enough for a record whose own name is near NAME_MAX. :func:`checkpoint` sits
    just before the rename, so a test can stop the process there.
    """
    with open_atomic(path, durable=True) as file:
        file.write(data)
        checkpoint(f"replace:{path.name}")
        file.commit(path)


@dataclass(frozen=True)
class Replacement:
    """What a committed replace did: the snapshot folder and the files it touched."""

    history: Path
    removed: tuple[str, ...]
    written: tuple[str, ...]


def _bare(name: Any) -> str:
    if not isinstance(name, str) or not name or Path(name).name != name or "/" in name \
            or "\\" in name or name in (".", "..") or name.casefold() == "memory.md":
        raise JournalError(f"journal names an unsafe file: {name!r}")
    return name


def _history_name(base: Path) -> str:
    """A free snapshot folder name; names sort by time (call under the store lock)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    candidate, n = stamp, 1
    while (base / candidate).exists():
        candidate, n = f"{stamp}-{n}", n + 1
    return candidate


def history_base(root: Path, *, create: bool = False) -> Path:
    """``root/.history`` once it (and ``root``) is known to be a real folder inside the
    workspace: snapshots are written, swept and pruned there, so a ``.history`` planted as
    a link would have ctxlab write — and delete — outside. Raises
    :class:`core.harness_paths.HarnessPathError` with one line."""
    harness_dir(root.parent, Path(root.name) / HISTORY_DIR, create=create)
    return root / HISTORY_DIR


def _snapshot(root: Path, remove: Sequence[str], add: Mapping[str, bytes],
              reason: str) -> Path:
    """Write ``.history/<timestamp>/`` atomically: built in a hidden temp folder, renamed
    into place only once complete. A failure removes the temp folder; a SIGKILL leaves
    it hidden, never counted, and swept by :func:`sweep_history_temp` on the next open."""
    base = history_base(root, create=True)
    name = _history_name(base)
    tmp = base / f"{HISTORY_TMP_PREFIX}{name}-{secrets.token_hex(4)}"
    links: dict[str, str] = {}
    try:
        (tmp / "old").mkdir(parents=True)
        (tmp / "new").mkdir()
        for file in remove:
            data = _old_bytes(root, file, links)
            if data is not None:
                atomic_write(tmp / "old" / file, data)
        for file, data in add.items():
            atomic_write(tmp / "new" / file, data)
        manifest = {"version": 1, "reason": reason, "created": name,
                    "removed": list(remove), "written": list(add), "links": links}
        atomic_write(tmp / MANIFEST_NAME, _json(manifest))
        checkpoint("history:rename")
        os.rename(tmp, base / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(base)
    return base / name


def _old_bytes(root: Path, file: str, links: dict[str, str]) -> bytes | None:
    """What a removed name held, for ``old/``; a link inside the store is copied as the
    bytes it leads to (and noted in ``links``), since a dropped link is a dropped record too.
    A link leading out of the store is never a record and is not read."""
    source = root / file
    if source.is_symlink():
        links[file] = os.readlink(source)
        if not Path(os.path.realpath(source)).is_relative_to(os.path.realpath(root)):
            return None
    elif not source.is_file():
        return None
    return read_limited(source, MAX_RECORD_BYTES)


def read_or_none(path: Path, *, follow_links: bool = True) -> bytes | None:
    """A store file's bytes, or None when it is missing, no regular file or over the cap:
    files in the store are hand-editable, so reading one must never block or fill memory."""
    try:
        return read_limited(path, MAX_RECORD_BYTES, follow_links=follow_links)
    except UntrustedFileError:
        return None


def sweep_history_temp(root: Path) -> list[str]:
    """Delete snapshot folders a killed consolidation left half-built (under the lock)."""
    base = history_base(root)
    removed = []
    with suppress(OSError):
        for entry in os.scandir(base):
            if entry.name.startswith(HISTORY_TMP_PREFIX) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
    return removed


def complete_snapshots(root: Path) -> list[Path]:
    """Finished snapshots, oldest first: visible folders holding a manifest."""
    base = history_base(root)
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir()
                  if not p.name.startswith(".") and p.is_dir() and not p.is_symlink()
                  and (p / MANIFEST_NAME).is_file())


class StoreChanged(JournalError):
    """A file changed between reading it and replacing it (someone else wrote it)."""


def commit_replace(root: Path, remove: Sequence[str], add: Mapping[str, bytes],
                   *, expected: Mapping[str, bytes] | None = None,
                   reason: str = "consolidate") -> Replacement:
    """Remove ``remove`` and write ``add`` (name → bytes) as one crash-safe step.

    ``expected`` maps files to the bytes the caller based its plan on; if any differs now
    (a hand edit, another process) nothing is touched and :class:`StoreChanged` is raised.
    The caller holds the store lock. Raises :class:`JournalError` when an earlier replace is
    still pending (it must be recovered first).
    """
    journal_path = root / JOURNAL_NAME
    if os.path.lexists(journal_path):
        raise JournalError("an interrupted consolidation is pending; reopen the store first")
    remove = [_bare(n) for n in remove]
    add = {_bare(n): data for n, data in add.items()}
    for name, data in (expected or {}).items():
        if read_or_none(root / name) != data:
            raise StoreChanged(f"{name} changed while consolidating; nothing was replaced")
    for name in add:  # a file this replace did not read is someone else's: never write over it
        if name not in remove and os.path.lexists(root / name):
            raise StoreChanged(f"{name} appeared while consolidating; nothing was replaced")
    sweep_history_temp(root)
    history = _snapshot(root, remove, add, reason)
    journal = {"version": 1, "history": history.name, "remove": remove, "add": list(add)}
    atomic_write(journal_path, _json(journal))  # the commit point
    checkpoint("committed")
    _apply(root, journal)
    prune_history(root)
    return Replacement(history, tuple(remove), tuple(add))


def _json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _apply(root: Path, journal: dict[str, Any]) -> None:
    """Roll a committed journal forward. Idempotent: safe to run again after a crash."""
    history = history_base(root) / _bare(journal.get("history"))
    remove = [_bare(n) for n in journal.get("remove", [])]
    add = [_bare(n) for n in journal.get("add", [])]
    staged = {}
    for name in add:
        try:
            staged[name] = read_limited(history / "new" / name, MAX_RECORD_BYTES,
                                        follow_links=False)
        except UntrustedFileError as exc:
            raise JournalError(f"staged file missing for {name}: {exc}") from None
    for name in remove:
        if name not in staged:
            checkpoint(f"unlink:{name}")
            with suppress(FileNotFoundError):
                (root / name).unlink()
    for name, data in staged.items():
        target = root / name
        if read_or_none(target, follow_links=False) != data:
            atomic_write(target, data)
    fsync_dir(root)
    checkpoint("journal:remove")
    (root / JOURNAL_NAME).unlink()
    fsync_dir(root)


def pending(root: Path) -> bool:
    """True when a committed replace has not been fully applied yet."""
    return os.path.lexists(root / JOURNAL_NAME)


def recover(root: Path) -> Replacement | None:
    """Finish an interrupted replace, if any (call under the store lock).

    Returns what was rolled forward, or None when there was nothing to do.
    """
    sweep_stale_temp(root, writers_excluded=True)  # every writer of the store holds its lock
    sweep_history_temp(root)
    journal_path = root / JOURNAL_NAME
    if not os.path.lexists(journal_path):
        return None
    try:  # a planted FIFO or link under the name is refused, never waited on or followed
        journal = json.loads(read_limited(journal_path, MAX_RECORD_BYTES, follow_links=False))
    except (UntrustedFileError, UnicodeDecodeError, json.JSONDecodeError,
            RecursionError) as exc:
        raise JournalError(f"{JOURNAL_NAME} is unreadable: {exc}") from None
    if not isinstance(journal, dict) or journal.get("version") != 1:
        raise JournalError(f"{JOURNAL_NAME} has an unknown format")
    _apply(root, journal)
    history = root / HISTORY_DIR / journal["history"]
    return Replacement(history, tuple(journal.get("remove", [])), tuple(journal.get("add", [])))


def prune_history(root: Path, keep: int = HISTORY_KEEP) -> None:
    """Keep only the newest ``keep`` complete snapshots (names sort by time).

    Only complete snapshots count and only they are pruned: a folder without a manifest
    (left by a version that built snapshots in place) may hold the only copy of a record.
    """
    folders = complete_snapshots(root)
    for old in folders[:-keep] if keep > 0 else folders:
        shutil.rmtree(old, ignore_errors=True)
