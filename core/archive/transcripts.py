"""Transcripts: a whole message list saved before a stage removes anything from it.

One JSON message per line, written atomically and listed in the manifest like a result. A
snip past the message limit writes the whole history again at every request while only its
end is new, so the last transcript's lines are kept encoded (by message identity) and each
message is encoded once. A mixin of :class:`~core.archive.store.Archive`, apart only to keep
each module to one concept.
"""

from __future__ import annotations

import json
import os
import uuid
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.archive.atomic import atomic_write_bytes
from core.archive.content_hash import digest_bytes
from core.archive.manifest import Manifest, Persisted
from core.measure import missing


class Transcripts:
    """Writes transcripts; the archive supplies its folders, manifest and checks."""

    transcript_dir: Path
    _transcripts_rel: str  # the folder relative to the workspace, "/"-separated
    _manifest: Manifest
    # the last transcript's lines by message identity, encoded, with each line's chars
    _lines: dict[int, tuple[dict[str, Any], bytes, int]]

    if TYPE_CHECKING:  # supplied by the archive
        def _abs(self, rel: str) -> str: ...
        def _before_write(self, folder: Path | None = None) -> None: ...
        def _wrote(self, rel: str, st: os.stat_result | None = None) -> None: ...

    def _transcript_lines(self, messages: list[dict[str, Any]]) -> tuple[bytes, int]:
        """The transcript of ``messages``: its UTF-8 bytes (one JSON line per message) and
        its length in chars. The last transcript's line is reused for a message it held (a
        message is never changed in place once in a history), already encoded: the bytes
        written are the bytes hashed, and no line is encoded twice. The lines kept hold
        their messages, so an id found among them is that message's own, and a whole list
        is looked up (and joined) in C: snip writes the whole history at every call once a
        long session is past its message limit."""
        ids = list(map(id, messages))
        found: list[tuple[dict[str, Any], bytes, int] | None] = \
            list(map(self._lines.get, ids))
        for index in missing(found):
            message = messages[index]
            line = json.dumps(message, default=str, ensure_ascii=False) + "\n"
            found[index] = (message, line.encode("utf-8", "surrogatepass"), len(line))
        lines: list[tuple[dict[str, Any], bytes, int]] = found  # type: ignore[assignment]
        self._lines = dict(zip(ids, lines, strict=True))
        return b"".join(map(itemgetter(1), lines)), sum(map(itemgetter(2), lines))

    def write_transcript(self, messages: list[dict[str, Any]]) -> str:
        """Save the whole message list before anything is removed; return its relative path."""
        self._before_write(self.transcript_dir)
        rel = f"{self._transcripts_rel}/transcript_{uuid.uuid4().hex}.jsonl"
        data, chars = self._transcript_lines(messages)
        written = atomic_write_bytes(self._abs(rel), data)
        self._wrote(rel, written)
        self._manifest.add(Persisted(rel, "", chars, digest_bytes(data), "transcript"))
        return rel
