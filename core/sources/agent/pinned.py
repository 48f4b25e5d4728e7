"""Pinned project rules: ``CTXLAB.md`` (then ``AGENTS.md``, then ``CLAUDE.md``) in the system
prompt of every main call, never in the message history.

Users' most frequent complaint about compaction is that project rules and standing
instructions vanish into a summary. Text that must survive is therefore kept *outside* the
compactable history: each rules file present in the workspace root becomes its own
system-prompt section (``rules:CTXLAB.md`` …, category ``pinned``), re-read before every
model call so a hand edit takes effect on the very next call. Re-reading is cheap: a file
is only read again when its stat signature (mtime_ns, ctime_ns, size, inode) changes — or
while its mtime is within :data:`RACY_NS` of the moment it was read, since file timestamps
tick coarsely and a same-size edit in the same tick would otherwise go unseen (git's
"racily clean" problem); such a re-read only compares bytes.

A rules file is the user's text and may be anything. One that is longer than
:data:`RULES_CHAR_CAP` characters is cut there with a visible ``[truncated: N of M chars]``
marker; one that is binary, not UTF-8 or unreadable is skipped. Either way the harness says
so with one ``error`` event (kind ``rules_file``) per version of the file — a notice, not a
failure: the run goes on.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.events import Error, Event
from core.sources.agent.system_prompt import Section

# The documented order: ctxlab's own file first, then the two common conventions.
RULES_FILES: tuple[str, ...] = ("CTXLAB.md", "AGENTS.md", "CLAUDE.md")
RULES_CHAR_CAP = 20_000  # per file; three files can pin at most 60,000 chars of rules
READ_BYTE_CAP = 1_000_000  # a rules file is never read past this many bytes
RULES_SECTION_LIMIT = RULES_CHAR_CAP + 500  # cap + header + truncation marker, per section
RACY_NS = 2_000_000_000  # an mtime this close to the read time is not trusted
NOTICE_KIND = "rules_file"
RULES_HEADER = (
    "Project rules from {name} in the workspace, written by the user (pinned: re-read "
    "before every request and never compacted). They apply to every request; follow them "
    "together with the current user request."
)


def truncation_marker(shown: int, total: str) -> str:
    return f"[truncated: {shown} of {total} chars]"


@dataclass(frozen=True)
class _Loaded:
    """One version of one rules file: its section (None when skipped)."""

    signature: tuple[int, int, int, int]
    section: Section | None
    digest: str = ""  # of the bytes read, to tell a racy re-read's result apart
    racy: bool = False  # modified too close to the read: check the bytes again next time


class ProjectRules:
    """The rules files of one workspace, read lazily and cached by stat signature."""

    def __init__(self, workspace: Path, emit: Callable[[Event], Any] | None = None, *,
                 files: tuple[str, ...] = RULES_FILES, cap: int = RULES_CHAR_CAP) -> None:
        self.workspace = Path(workspace)
        self.emit = emit or (lambda event: event)
        self.files = files
        self.cap = cap
        self._cache: dict[str, _Loaded] = {}
        self.reads = 0  # how many times a file was actually read (the cache's proof)

    def sections(self) -> list[Section]:
        """One section per present, readable, non-empty rules file, in the documented order.

        A file reached twice (``AGENTS.md`` a symlink to ``CLAUDE.md``) is pinned once.
        """
        out: list[Section] = []
        seen: set[tuple[int, int]] = set()
        for name in self.files:
            path = self.workspace / name
            try:
                st = path.stat()
            except OSError:  # absent (the usual case), or a dangling link
                self._cache.pop(name, None)
                continue
            signature = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
            loaded = self._cache.get(name)
            if loaded is None or loaded.signature != signature or loaded.racy:
                loaded = self._load(name, path, st, signature, loaded)
                self._cache[name] = loaded
            identity = (st.st_dev, st.st_ino)
            if loaded.section is None or identity in seen:
                continue
            seen.add(identity)
            out.append(loaded.section)
        return out

    # -- reading one file ---------------------------------------------------------------------

    def _notice(self, message: str) -> None:
        self.emit(Error(message=message, kind=NOTICE_KIND))

    def _load(self, name: str, path: Path, st: os.stat_result,
              signature: tuple[int, int, int, int], before: _Loaded | None) -> _Loaded:
        if not stat.S_ISREG(st.st_mode):
            self._notice(f"{name} is not a regular file; it is not used as project rules")
            return _Loaded(signature, None)
        self.reads += 1
        read_at = time.time_ns()
        try:
            with path.open("rb") as handle:
                data = handle.read(READ_BYTE_CAP + 1)
        except OSError as exc:
            self._notice(f"{name} cannot be read ({exc.strerror or exc}); "
                         "it is not used as project rules")
            return _Loaded(signature, None)
        digest = hashlib.sha256(data).hexdigest()
        racy = read_at - st.st_mtime_ns < RACY_NS
        if before is not None and before.digest == digest:
            return _Loaded(signature, before.section, digest, racy)  # same bytes: no news
        return _Loaded(signature, self._section(name, data, st), digest, racy)

    def _section(self, name: str, data: bytes, st: os.stat_result) -> Section | None:
        """The section for these bytes, with a notice for whatever is wrong with them."""
        whole = len(data) <= READ_BYTE_CAP
        data = data[:READ_BYTE_CAP]
        text = _decode(data, final=whole)
        if text is None:
            self._notice(f"{name} is not UTF-8 text (a binary file?); "
                         "it is not used as project rules")
            return None
        text = text.removeprefix("\ufeff")
        if not text.strip():
            return None
        if whole and len(text) <= self.cap:
            body = text
        else:
            total = str(len(text)) if whole else f"more than {len(text)}"
            body = text[:self.cap].rstrip("\n") + "\n" + truncation_marker(self.cap, total)
            size = f"{len(text):,} chars" if whole else f"{st.st_size:,} bytes"
            self._notice(f"{name} is {size}; only its first {self.cap:,} chars are pinned "
                         f"(the limit per rules file)")
        return Section(f"rules:{name}", f"{RULES_HEADER.format(name=name)}\n\n{body}",
                       "pinned", name)


def _decode(data: bytes, *, final: bool) -> str | None:
    """UTF-8 text, or None for binary or non-UTF-8 bytes.

    A read cut at :data:`READ_BYTE_CAP` may end inside a multi-byte character, so a
    partial file is decoded incrementally without insisting on a complete last character.
    """
    if b"\x00" in data:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError:
        return None
