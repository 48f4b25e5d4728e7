"""Did every tool result that left a strategy's context stay recoverable, byte for byte?

A ledger entry says where a result went (``where``): a tool-result file, a transcript (both
relative to the workspace), or ``"lost"``. Saying so is not proof, so each claim is checked
against the archive itself: a result file must be the one the manifest lists with the
original's hash (and still hold those bytes), a transcript must hold the original content
under the result's id. The checks are cheap: a file ctxlab just wrote is known intact
without reading it again, the original is hashed once, and a transcript is parsed once
however many results it holds.

A tool_use id can repeat (some harnesses reuse ``call_0``), so an id stands for every result
recorded under it: a claim holds when the place keeps one of them byte for byte, and a
departure is counted per result, the one whose bytes the place keeps (else the one of that
size a ledger entry names, else the id's unknown one), never more recoverable than left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.archive.content_hash import digest_text
from core.archive.store import (
    RESULTS_DIR,
    TRANSCRIPT_DIR,
    Archive,
    content_as_text,
    content_size,
)
from core.sources.replay.model import Recording

LOST = "lost"
KEEP_TRANSCRIPTS = 4  # transcripts held parsed at once
RESULTS, TRANSCRIPTS = RESULTS_DIR.as_posix(), TRANSCRIPT_DIR.as_posix()


def recorded_results(recording: Recording) -> dict[str, list[Any]]:
    """Every tool result of the trajectory by its tool_use id, each distinct content once
    in the order first sent (an id can repeat): the originals the archive must hold."""
    found: dict[str, list[Any]] = {}
    for step in recording.steps:
        for message in step.input:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    held = found.setdefault(str(block.get("tool_use_id", "")), [])
                    if (content := block.get("content", "")) not in held:
                        held.append(content)
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
    originals: Mapping[str, Sequence[Any]]  # every content recorded under each id
    _transcripts: dict[str, dict[str, list[Any]]] = field(default_factory=dict)

    def departures(self, ledger: Iterable[dict[str, Any]]) -> Departures:
        """Distinct results that left, and those whose every claim holds."""
        held: dict[tuple[str, int], bool] = {}  # (id, which original) -> every claim holds
        for entry in ledger:
            result, ok = self._departure(entry)
            held[result] = held.get(result, True) and ok
        return Departures(len(held), sum(held.values()))

    def _departure(self, entry: dict[str, Any]) -> tuple[tuple[str, int], bool]:
        """Which result of its id a ledger entry is about, and whether its claim holds."""
        tool_use_id, where = str(entry.get("tool_use_id", "")), str(entry.get("where", LOST))
        originals = self.originals.get(tool_use_id, ())
        for n, original in enumerate(originals):
            if self._holds(tool_use_id, where, original):
                return (tool_use_id, n), True
        sizes = [n for n, original in enumerate(originals)
                 if content_size(original) == entry.get("chars")]
        return (tool_use_id, sizes[0] if len(sizes) == 1 else -1), False

    def holds(self, tool_use_id: str, where: str) -> bool:
        """Does ``where`` hold an original of this id, byte for byte?"""
        return any(self._holds(tool_use_id, where, original)
                   for original in self.originals.get(tool_use_id, ()))

    def _holds(self, tool_use_id: str, where: str, original: Any) -> bool:
        """Does ``where`` hold ``original``, recorded under this id, byte for byte?"""
        if where == LOST:
            return False
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
        return held is not None and any(
            self._same(tool_use_id, content, original) for content in held.get(tool_use_id, ()))

    def _same(self, tool_use_id: str, content: Any, original: Any) -> bool:
        """A transcript's ``content`` is ``original``, or a pointer to a file holding it."""
        if content == original:
            return True
        pointer = self.archive.trusted_pointer(tool_use_id, content)
        return pointer is not None and self._result_file(pointer, original)

    def _transcript(self, where: str) -> dict[str, list[Any]] | None:
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


def _results_of(messages: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Every tool result a transcript holds, under its id (all of them, if an id repeats)."""
    held: dict[str, list[Any]] = {}
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                held.setdefault(str(block.get("tool_use_id", "")), []).append(
                    block.get("content", ""))
    return held
