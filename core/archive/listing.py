"""What an archive holds, as the events report it: one record per file ctxlab wrote.

A front end lists the archive from these records — ``archive_listing`` when a run first
uses a workspace that already has an archive, then each ``stage`` event's ``archived`` —
instead of reading the folders and guessing from file names what each file is. A record
says what only the archive knows for sure: whether the file is a tool result or a
transcript, the tool result it holds, and how many characters it keeps.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from core.archive.manifest import LEGACY_MANIFEST, MANIFEST
from core.archive.manifest_lines import Persisted
from core.archive.store import Archive

FileRecord = dict[str, Any]


def file_record(entry: Persisted) -> FileRecord:
    """``{"path", "kind", "chars", "tool_use_id"}`` of one manifest entry (``kind`` is
    ``transcript`` or ``result``; a transcript's ``tool_use_id`` is empty)."""
    return {"path": entry.path,
            "kind": "transcript" if entry.format == "transcript" else "result",
            "chars": entry.chars, "tool_use_id": entry.tool_use_id}


def holds_a_manifest(archive: Archive) -> bool:
    """Has anything ever been archived here? A fresh workspace has no manifest: nothing to
    list, and no reason to read further (one ``lstat`` per manifest name)."""
    return any(os.path.lexists(archive.results_dir / name)
               for name in (MANIFEST, LEGACY_MANIFEST))


def archive_listing(archive: Archive) -> tuple[FileRecord, ...]:
    """Every file the archive's manifest lists, transcripts included, in its order."""
    return tuple(file_record(entry)
                 for entry in archive.manifest(transcripts=True).values())


def archive_records(archive: Archive, paths: Iterable[str]) -> tuple[FileRecord, ...]:
    """The records of those of ``paths`` the archive lists, in their order (a file written
    beside the archive, such as the API's own summary, has none)."""
    found = []
    for path in paths:
        try:
            found.append(file_record(archive.manifest_entry(path)))
        except KeyError:
            continue
    return tuple(found)
