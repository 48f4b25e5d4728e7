"""Did every tool result that left a strategy's context stay recoverable, byte for byte?

A ledger entry says where a result went (``where``): a tool-result file, a transcript (both
relative to the workspace), or ``"lost"``. Saying so is not proof, so each claim is checked
against the archive itself: a result file must be the one the manifest lists with the
original's hash (and still hold those bytes), a transcript must hold the original content
under the result's id. The checks are cheap: a file ctxlab just wrote is known intact
without reading it again, the original is hashed once, and a transcript is parsed once
however many results it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.archive.content_hash import digest_text
from core.archive.store import RESULTS_DIR, TRANSCRIPT_DIR, Archive, content_as_text
from core.sources.replay.model import Recording

LOST = "lost"
KEEP_TRANSCRIPTS = 4  # transcripts held parsed at once
RESULTS, TRANSCRIPTS = RESULTS_DIR.as_posix(), TRANSCRIPT_DIR.as_posix()


def recorded_results(recording: Recording) -> dict[str, Any]:
    """Every tool result of the trajectory by its tool_use id (the first, if an id repeats):
    the originals the archive must hold."""
    found: dict[str, Any] = {}
    for step in recording.steps:
        for message in step.input:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.setdefault(str(block.get("tool_use_id", "")), block.get("content", ""))
    return found


@dataclass(frozen=True)
class Departures:
    """How many distinct tool results left the context, and how many of them can be
    recovered byte-exact from the archive."""

    left: int
    recoverable: int


@dataclass
class ArchiveCheck:
    """Checks ledger claims against one strategy's archive (see the module docstring)."""

    archive: Archive
    originals: Mapping[str, Any]
    _transcripts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def departures(self, ledger: Iterable[dict[str, Any]]) -> Departures:
        places: dict[str, list[str]] = {}
        for entry in ledger:
            places.setdefault(str(entry.get("tool_use_id", "")), []).append(
                str(entry.get("where", LOST)))
        recoverable = sum(1 for tool_use_id, wheres in places.items()
                          if all(self.holds(tool_use_id, where) for where in wheres))
        return Departures(len(places), recoverable)

    def holds(self, tool_use_id: str, where: str) -> bool:
        """Does ``where`` hold the original of this result, byte for byte?"""
        if where == LOST or tool_use_id not in self.originals:
            return False
        original = self.originals[tool_use_id]
        folder = where.rpartition("/")[0]  # the engine's own ledger: a relative archive path
        if folder == RESULTS:
            return self._result_file(where, original)
        if folder == TRANSCRIPTS:
            return self._in_transcript(tool_use_id, where, original)
        return False

    def _result_file(self, where: str, original: Any) -> bool:
        try:
            entry = self.archive.manifest_entry(where)
        except KeyError:
            return False
        text = content_as_text(original)
        return entry.chars == len(text) and entry.digest == digest_text(text, entry.algorithm) \
            and self.archive.intact(entry)

    def _in_transcript(self, tool_use_id: str, where: str, original: Any) -> bool:
        held = self._transcript(where)
        if held is None or tool_use_id not in held:
            return False
        content = held[tool_use_id]
        if content == original:
            return True
        pointer = self.archive.trusted_pointer(tool_use_id, content)
        return pointer is not None and self._result_file(pointer, original)

    def _transcript(self, where: str) -> dict[str, Any] | None:
        """The tool results a transcript holds, by id (read once); None if it is not the
        transcript the manifest lists."""
        if where not in self._transcripts:
            try:
                entry = self.archive.manifest_entry(where)
                ok = entry.format == "transcript" and self.archive.intact(entry)
                messages = self.archive.read_transcript(where) if ok else None
            except (LookupError, OSError, ValueError):
                messages = None
            if messages is None:
                return None
            if len(self._transcripts) >= KEEP_TRANSCRIPTS:  # a stage's entries come together
                self._transcripts.pop(next(iter(self._transcripts)))
            self._transcripts[where] = _results_of(messages)
        return self._transcripts[where]


def _results_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    held: dict[str, Any] = {}
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                held[str(block.get("tool_use_id", ""))] = block.get("content", "")
    return held
