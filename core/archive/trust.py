"""Which pointer texts in a history the archive trusts, and which it reports as broken.

A pointer that is trusted stands for its file: a stage may leave it, or replace it by a
shorter one, and the ledger says the original is in that file. So trust is given only to a
text ctxlab itself wrote for that file, for the same tool_use id, while the file's bytes
still match the manifest and, for a wrapper, only when it can be rebuilt from those bytes
(:mod:`core.archive.rebuild`): the manifest and its index are files anyone in the
workspace can write. Everything else that looks like a pointer is content. A mixin of
:class:`~core.archive.store.Archive`, apart only to keep each module readable.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.archive.manifest import Manifest, Persisted, sha256_text
from core.archive.rebuild import rebuilds, wrapper_preview
from core.compact.pointers import archive_marker_path, earlier_text, pointer_path

REBUILT_MEMO = 4096  # wrappers whose rebuild check is remembered (a few kB each)


class PointerTrust:
    """Trust decisions; the archive supplies its manifest, folders and integrity check."""

    workspace: Path
    results_dir: Path
    transcript_dir: Path
    _manifest: Manifest
    _rebuilt: dict[tuple[str, str, str], bool]

    if TYPE_CHECKING:  # supplied by the archive
        def intact(self, entry: Persisted) -> bool: ...
        def rel(self, path: Path) -> str: ...
        def resolve_inside(self, rel_path: str, folder: Path) -> Path | None: ...

    def trusted_pointer(self, tool_use_id: str, content: Any) -> str | None:
        """The path of a pointer ctxlab wrote for this very result, with its file intact.

        A wrapper must also be rebuildable from that file (:mod:`core.archive.rebuild`):
        the manifest is a file anyone in the workspace can append to, so a recorded digest
        alone could make "a real wrapper and new data" trusted, and then replaced by a bare
        pointer with the new data in no file.
        """
        path = pointer_path(content)
        if path is None:
            return None
        entry = self._manifest.get(path)
        if entry is None or entry.tool_use_id != tool_use_id or entry.format == "transcript":
            return None
        if not self._wrote_pointer(entry, content) or not self.intact(entry):
            return None
        if content != earlier_text(entry.path) and not self._rebuilds(entry, content):
            return None
        return entry.path

    def _wrote_pointer(self, entry: Persisted, content: str) -> bool:
        """Does ``content`` claim to be a pointer text ctxlab wrote for ``entry``'s file?

        The placeholder (fully determined by the path), a wrapper whose digest the manifest
        records, or a wrapper for a file known only from ``manifest.json`` (written before
        wrappers were recorded). A claim, not trust: see :meth:`trusted_pointer`.
        """
        if content == earlier_text(entry.path):
            return True
        if sha256_text(content) in self._manifest.pointers(entry.path):
            return True
        return self._manifest.is_legacy(entry.path) and \
            wrapper_preview(entry.path, content) is not None

    def _rebuilds(self, entry: Persisted, content: str) -> bool:
        """Is the wrapper ``content`` derived from ``entry``'s (verified) file? Remembered
        per file digest, so a stage asking again reads nothing."""
        preview = wrapper_preview(entry.path, content)
        if preview is None:
            return False
        key = (entry.path, entry.digest, content)
        known = self._rebuilt.get(key)
        if known is None:
            if len(self._rebuilt) >= REBUILT_MEMO:
                self._rebuilt.clear()
            known = self._rebuilt[key] = rebuilds(self.workspace / entry.path, entry.chars,
                                                  preview)
        return known

    def broken_pointer(self, tool_use_id: str, content: Any) -> str | None:
        """A pointer ctxlab wrote (or one shaped like it, into its own folder) whose file is
        gone or changed.

        Such a text must never be persisted as if it were the result (the course then
        chains a pointer to a pointer); the caller reports it instead.
        """
        path = pointer_path(content)
        if path is None or self.trusted_pointer(tool_use_id, content):
            return None
        inside = self.resolve_inside(path, self.results_dir)
        if inside is None:
            return None
        entry = self._entry(path)
        if entry is not None:
            if entry.tool_use_id != tool_use_id or not self._wrote_pointer(entry, content):
                return None  # someone else's pointer quoted, or a forged text: content
            if self.intact(entry):
                return None  # the file is fine but the text is not derived from it: content
            return path  # ours, and its file is missing or changed
        return None if inside.is_file() else path

    def _entry(self, path: str) -> Persisted | None:
        # Fast path: the exact relative path ctxlab itself wrote (no filesystem call).
        known = self._manifest.get(path)
        if known is not None:
            return known
        inside = self.resolve_inside(path, self.results_dir)
        if inside is None:
            inside = self.resolve_inside(path, self.transcript_dir)
        if inside is None:
            return None
        return self._manifest.get(self.rel(inside))

    def valid_archive_marker(self, content: Any) -> bool:
        path = archive_marker_path(content)
        if path is None:
            return False
        inside = self.resolve_inside(path, self.transcript_dir)
        if inside is None or not inside.is_file():
            return False
        entry = self._entry(path)
        return entry is None or self.intact(entry)  # unlisted: written before the log
