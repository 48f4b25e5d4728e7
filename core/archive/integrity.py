"""What ctxlab trusts of its own files and folders: a file's bytes against the manifest, and
an archive folder against links.

A file is re-hashed only when its ``stat`` changed since it last matched (so a stage asking
about hundreds of results reads nothing), and a changed one is reported once and never
trusted again. A folder is checked before anything is written or swept there, and again
once after every flush. A mixin of :class:`~core.archive.store.Archive`, apart only to keep
each module to one concept.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from core.archive.atomic import sweep_stale_temp
from core.archive.content_hash import digest_file
from core.archive.manifest import Persisted
from core.harness_paths import FolderKey, folder_key, harness_dir


class Integrity:
    """Stat-keyed verification of the archive's files and the link check of its folders."""

    workspace: Path
    results_dir: Path
    # path -> stat key of the file when its bytes last matched the manifest, so a file is
    # hashed again only when it changed on disk (size, times, inode)
    _verified: dict[str, tuple[int, ...]]
    _changed: set[str]
    # archive folders checked (and swept) for writing -> their key when checked
    _ready: dict[Path, FolderKey | None]
    # folders checked for writing since the open stage began: a stage's writes are checked
    # once (no tool runs between them, and every stage ends with a flush, which closes it)
    _checked_folders: set[Path]
    _in_stage: bool

    if TYPE_CHECKING:  # supplied by the archive
        def _report(self, message: str) -> None: ...
        def _abs(self, rel: str) -> str: ...

    def intact(self, entry: Persisted) -> bool:
        """Do the file's bytes still match the hash recorded when ctxlab wrote it?

        A changed file is reported once (``error``, kind ``archive``) and never trusted.
        """
        try:
            st = os.lstat(self._abs(entry.path))
        except (OSError, ValueError):
            return False  # missing: the caller reports a broken pointer
        key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)
        if self._verified.get(entry.path) == key:
            return True
        ok = False
        if stat.S_ISREG(st.st_mode):
            try:
                ok = digest_file(self.workspace / entry.path, entry.algorithm) == entry.digest
            except OSError:
                ok = False
        if ok:
            self._verified[entry.path] = key
            return True
        self._verified.pop(entry.path, None)
        if entry.path not in self._changed:
            self._changed.add(entry.path)
            self._report(f"{entry.path} changed after ctxlab wrote it (its hash no longer "
                         "matches the manifest): it is not trusted and nothing will point "
                         "at it again")
        return False

    def _wrote(self, rel: str, st: os.stat_result | None = None) -> None:
        """Remember a file just written as verified (its hash is the one just recorded);
        ``st``: its ``stat`` when the write already took it."""
        if st is None:
            st = os.lstat(self._abs(rel))
        self._verified[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                               st.st_dev, st.st_mode)
        self._changed.discard(rel)

    def _folder(self, folder: Path, create: bool) -> None:
        """Refuse an archive folder that is a link or leads outside the workspace.

        A cloned workspace can ship ``.task_outputs`` as a link to the user's home; writing
        (or trusting what is read) through it would leave the workspace. Checked component
        by component (:func:`core.harness_paths.harness_dir`) before anything is written or
        swept there, and again whenever a component's ``lstat`` changed since (a link swapped
        in mid-session by the model's ``bash``); a refusal is one line (an ``OSError``).
        """
        relative = folder.relative_to(self.workspace)
        known = self._ready.get(folder)
        if known is not None and known == folder_key(folder, len(relative.parts)):
            return  # the same real folders as when checked: no link swapped in since
        if create:
            self.workspace.mkdir(parents=True, exist_ok=True)  # the user's choice of place
        checked = harness_dir(self.workspace, relative, create=create)
        if create:
            if folder not in self._ready:
                sweep_stale_temp(folder)  # a killed writer's temp files, before the first write
            self._ready[folder] = folder_key(checked, len(relative.parts))

    def open_stage(self) -> None:
        """A stage begins: its writes check each folder once, until its flush. A link can
        only be swapped in by a tool, and tools run between stages, never inside one."""
        self._checked_folders.clear()
        self._in_stage = True

    def end_stage(self) -> None:
        """The open stage ends (its flush, or its failure before one): the next write checks
        its folder again."""
        self._checked_folders.clear()
        self._in_stage = False

    def _before_write(self, folder: Path | None = None) -> None:
        """Check a folder before writing into it: once per stage, and at every write made
        outside one (a transcript an API compaction leaves, a tool output kept whole), since
        a tool may have swapped the folder for a link since the last write."""
        folder = self.results_dir if folder is None else folder
        if folder not in self._checked_folders:
            self._folder(folder, True)
            if self._in_stage:
                self._checked_folders.add(folder)
