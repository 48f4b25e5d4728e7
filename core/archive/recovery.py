"""Reading back what the archive holds: a result, a transcript, the chain a ledger entry names.

Every read checks the file against the manifest first: a file whose bytes changed since
ctxlab wrote it raises :class:`ArchiveChanged` (and is reported) instead of handing back
bytes that are not the original. A mixin of :class:`~core.archive.store.Archive`, apart
only to keep each module readable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.archive.manifest import Persisted
from core.compact.pointers import archive_marker_path


def _read_exact(path: Path) -> str:
    """A file's text exactly as written: ``newline=""``, since the default would turn a
    result's ``\\r\\n`` into ``\\n`` on the way back, and recovery must be byte-exact."""
    with open(path, encoding="utf-8", errors="surrogatepass", newline="") as fh:
        return fh.read()


class ArchiveChanged(LookupError):
    """An archive file's bytes no longer match what ctxlab recorded when it wrote them."""



class Recovery:
    """Reads and the ledger; the archive supplies its folders, entries and trust checks."""

    workspace: Path
    results_dir: Path
    transcript_dir: Path
    ledger: list[dict[str, Any]]

    if TYPE_CHECKING:  # supplied by the archive
        def intact(self, entry: Persisted) -> bool: ...
        def resolve_inside(self, rel_path: str, folder: Path) -> Path | None: ...
        def _entry(self, path: str) -> Persisted | None: ...
        def trusted_pointer(self, tool_use_id: str, content: Any) -> str | None: ...

    def _checked(self, rel_path: str) -> Persisted | None:
        """The manifest entry of a file about to be read, refusing a changed file."""
        entry = self._entry(rel_path)
        if entry is not None and not self.intact(entry):
            raise ArchiveChanged(f"{entry.path} changed after ctxlab wrote it")
        return entry

    def read_result(self, rel_path: str) -> Any:
        """The original content of a persisted result (a string, or the block list)."""
        entry = self._checked(rel_path)
        text = _read_exact(self.workspace / rel_path)
        if entry is not None and entry.format == "json":
            return json.loads(text)
        return text

    def preview(self, rel_path: str, chars: int) -> str:
        """The first ``chars`` characters of a persisted result's text."""
        # surrogatepass: the file's own characters, so the preview is exactly its start
        with open(self.workspace / rel_path, encoding="utf-8", errors="surrogatepass",
                  newline="") as fh:
            return fh.read(chars)

    def read_transcript(self, rel_path: str) -> list[dict[str, Any]]:
        self._checked(rel_path)
        text = _read_exact(self.workspace / rel_path)
        # split on "\n" only: splitlines() would also cut at U+2028 inside a JSON string
        return [json.loads(line) for line in text.split("\n") if line.strip()]

    # -- ledger -----------------------------------------------------------------------------

    def record(self, tool_use_id: str, stage: str, chars: int, where: str,
               **extra: Any) -> dict[str, Any]:
        entry = {"tool_use_id": tool_use_id, "stage": stage, "chars": chars, "where": where,
                 **extra}
        self.ledger.append(entry)
        return entry

    def recover(self, tool_use_id: str, where: str, depth: int = 0) -> Any:
        """Follow a ledger ``where`` back to the original content of a tool result.

        A transcript may hold the result as a pointer written by an earlier stage; the
        chain is followed (bounded) until real content is found. A file whose bytes changed
        since ctxlab wrote it raises :class:`ArchiveChanged` (and is reported).
        """
        if depth > 16:
            raise LookupError(f"pointer chain too long for {tool_use_id}")
        if self.resolve_inside(where, self.results_dir) is not None:
            return self.read_result(where)
        if self.resolve_inside(where, self.transcript_dir) is None:
            raise LookupError(f"{where} is not an archive file")
        found: Any = None
        messages = self.read_transcript(where)
        for message in messages:
            for block in message.get("content") or []:
                if (isinstance(block, dict) and block.get("type") == "tool_result"
                        and block.get("tool_use_id") == tool_use_id):
                    found = block.get("content", "")
        if found is None:
            marker_paths = [archive_marker_path(m.get("content")) for m in messages]
            for nested in filter(None, marker_paths):
                try:
                    return self.recover(tool_use_id, nested, depth + 1)
                except LookupError:
                    continue
            raise LookupError(f"{tool_use_id} not found in {where}")
        pointer = self.trusted_pointer(tool_use_id, found)
        return self.recover(tool_use_id, pointer, depth + 1) if pointer else found
