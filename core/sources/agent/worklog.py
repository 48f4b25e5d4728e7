"""The work log: what the harness saw the agent do, pinned outside the compactable history.

After a compaction an agent no longer knows which files it already changed and redoes work —
users' second most frequent complaint. The summary is the model's own account and can be
wrong; the work log is not written by the model at all. The harness records, from the tools'
own results (:attr:`core.tools.ToolOutcome.meta`):

* the user's requests (first :data:`REQUEST_CHARS` chars each),
* every file written or edited (successful ``write_file`` / ``edit_file`` only),
* every command run with its exit status (``bash``).

The log is re-injected as the ``worklog`` system-prompt section (category ``pinned``) on
every main call, handed to the summarizer so a summary cannot contradict it, and saved per
session as ``.ctxlab/sessions/<name>/worklog.json`` so ``--resume`` brings it back.

It is bounded: the section never exceeds :data:`WORKLOG_BUDGET` chars. When it would, the
oldest entries are *folded* into counts ("… and 37 earlier commands (35 ok, 2 failed)") —
never silently dropped. The first request (usually the task itself) is folded last.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.archive.atomic import atomic_write_text
from core.sources.agent.saved import session_dir, session_file
from core.tools.outcome import ToolOutcome
from core.untrusted import UntrustedFileError, parse_json, read_limited

WORKLOG_BUDGET = 4_000  # max chars of the work log section in the system prompt
NOTES_BUDGET = 2_000  # max chars of the progress notes handed to the summarizer
REQUEST_CHARS = 200
COMMAND_CHARS = 160
PATH_CHARS = 200
MAX_STORED = 1_000  # entries kept per kind on disk; older ones live on as counts
WORKLOG_FILE = "worklog.json"
# MAX_STORED entries of each kind, each a line of a few hundred characters, is well under a
# megabyte; a larger file is not a log ctxlab wrote.
MAX_WORKLOG_BYTES = 16 * 1024 * 1024
DEFAULT_SESSION = "default"  # where a run without --session keeps its log
VERSION = 1
HEADER = (
    "Work log (recorded by the harness from tool results, not written by you; it survives "
    "every compaction, so trust it over any summary. Requests listed here are history, "
    "not instructions: serve the current request{source}):"
)
TITLES = {"requests": "Requests so far:", "files": "Files changed:",
          "commands": "Commands run:"}


class WorkLogError(ValueError):
    """A saved work log cannot be read."""


@dataclass
class RequestEntry:
    turn: int
    text: str


@dataclass
class FileEntry:
    path: str
    writes: int = 0
    edits: int = 0
    first_turn: int = 0
    last_turn: int = 0


@dataclass
class CommandEntry:
    turn: int
    command: str
    exit_code: int | None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass
class Rendered:
    """A rendered log, and for each kind how many entries are listed and how many folded."""

    text: str
    shown: dict[str, int]
    folded: dict[str, int]
    cut: bool = False  # the budget was too small even for counts: the text was cut


def _short(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass
class WorkLog:
    """One session's log. ``folded`` counts entries moved out of storage (see MAX_STORED)."""

    requests: list[RequestEntry] = field(default_factory=list)
    files: list[FileEntry] = field(default_factory=list)  # least recently touched first
    commands: list[CommandEntry] = field(default_factory=list)
    folded: Counter[str] = field(default_factory=Counter)
    source: str = ""  # workspace-relative path of the saved log, named in the header

    # -- recording ----------------------------------------------------------------------------

    def note_request(self, text: str, turn: int) -> None:
        self.requests.append(RequestEntry(turn, _short(text, REQUEST_CHARS)))
        if len(self.requests) > MAX_STORED:
            self.requests.pop(1)  # the first request states the task: it stays listed
            self.folded["requests"] += 1

    def note_tool(self, name: str, data: dict[str, Any], outcome: ToolOutcome,
                  turn: int) -> None:
        """Record what a tool result proves happened; anything else is ignored."""
        meta = outcome.meta or {}
        if name in ("write_file", "edit_file") and not outcome.is_error:
            path = meta.get("path")
            if isinstance(path, str) and path:
                self._note_file(path, name == "write_file", turn)
        elif name == "bash" and "exit_code" in meta:
            code = meta.get("exit_code")
            command = given if isinstance(given := data.get("command"), str) else "?"
            self.commands.append(CommandEntry(turn, _short(command, COMMAND_CHARS),
                                              code if isinstance(code, int) else None,
                                              bool(meta.get("timed_out"))))
            if len(self.commands) > MAX_STORED:
                old = self.commands.pop(0)
                self.folded.update({"commands": 1, "commands_ok" if old.ok else
                                    "commands_failed": 1})

    def _note_file(self, path: str, written: bool, turn: int) -> None:
        entry = next((f for f in self.files if f.path == path), None)
        if entry is None:
            entry = FileEntry(path, first_turn=turn)
        else:
            self.files.remove(entry)
        self.files.append(entry)  # most recently touched last
        if written:
            entry.writes += 1
        else:
            entry.edits += 1
        entry.last_turn = turn
        if len(self.files) > MAX_STORED:
            old = self.files.pop(0)
            self.folded.update({"files": 1, "files_written" if old.writes else
                                "files_edited": 1})

    # -- rendering ----------------------------------------------------------------------------

    def has_news(self) -> bool:
        """Anything the messages of a fresh turn would not already show?

        A log holding nothing but the current request repeats the request, so it is left
        out of the system prompt until there is progress or a second request.
        """
        return bool(self.files or self.commands or len(self.requests) > 1
                    or sum(self.folded.values()))

    def section_text(self, budget: int = WORKLOG_BUDGET) -> str:
        return self.render(budget).text if self.has_news() else ""

    def summary_notes(self, budget: int = NOTES_BUDGET) -> str:
        """Progress only (files and commands), for the summarizer: requests are already in
        the history it summarises; what summaries get wrong is what was done."""
        if not (self.files or self.commands or self.folded["files"] or self.folded["commands"]):
            return ""
        return self.render(budget, kinds=("files", "commands"), header=False).text

    def render(self, budget: int = WORKLOG_BUDGET,
               kinds: tuple[str, ...] = ("requests", "files", "commands"),
               header: bool = True) -> Rendered:
        """The log as text of at most ``budget`` chars, oldest entries folded first."""
        parts = {kind: self._part(kind) for kind in kinds}
        head = HEADER.format(source=f"; full log: {self.source}" if self.source else "") \
            if header else ""

        def size() -> int:
            chunks = [len(head)] if head else []
            chunks += [p.size() for p in parts.values() if not p.empty()]
            return sum(chunks) + max(len(chunks) - 1, 0)  # joined by newlines

        # Fold commands first (the least telling), keep a few of each kind as long as
        # possible, and the changed files longest: they are what stops work being redone.
        schedule = (("commands", 3), ("requests", 3), ("files", 10), ("commands", 0),
                    ("requests", 1), ("files", 0), ("requests", 0))
        for kind, floor in schedule:
            part = parts.get(kind)
            while part is not None and part.kept() > floor and size() > budget:
                part.fold_one()
        lines = [head] if head else []
        for part in parts.values():
            lines += part.lines()
        text = "\n".join(lines)
        cut = len(text) > budget
        if cut:
            marker = f"\n[work log cut to {budget} chars]"
            text = text[:max(budget - len(marker), 0)] + marker if budget > len(marker) \
                else text[:budget]
        return Rendered(text, {k: p.kept() for k, p in parts.items()},
                        {k: p.folded["n"] for k, p in parts.items()}, cut)

    def _part(self, kind: str) -> _Part:
        if kind == "requests":
            return _Part(TITLES[kind], [f"- turn {r.turn}: {r.text}" for r in self.requests],
                         [Counter(n=1)] * len(self.requests), Counter(n=self.folded["requests"]),
                         _fold_requests, head=1)
        if kind == "files":
            return _Part(TITLES[kind], [_file_line(f) for f in self.files],
                         [Counter(n=1, written=1) if f.writes else Counter(n=1, edited=1)
                          for f in self.files],
                         Counter(n=self.folded["files"], written=self.folded["files_written"],
                                 edited=self.folded["files_edited"]), _fold_files)
        return _Part(TITLES[kind], [_command_line(c) for c in self.commands],
                     [Counter(n=1, ok=1) if c.ok else Counter(n=1, failed=1)
                      for c in self.commands],
                     Counter(n=self.folded["commands"], ok=self.folded["commands_ok"],
                             failed=self.folded["commands_failed"]), _fold_commands)

    # -- persistence --------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "requests": [asdict(r) for r in self.requests],
                "files": [asdict(f) for f in self.files],
                "commands": [asdict(c) for c in self.commands],
                "folded": dict(sorted(self.folded.items()))}

    @classmethod
    def from_json(cls, data: Any) -> WorkLog:
        try:
            return cls([RequestEntry(int(r["turn"]), str(r["text"])) for r in data["requests"]],
                       [FileEntry(str(f["path"]), int(f["writes"]), int(f["edits"]),
                                  int(f["first_turn"]), int(f["last_turn"]))
                        for f in data["files"]],
                       [CommandEntry(int(c["turn"]), str(c["command"]),
                                     None if c["exit_code"] is None else int(c["exit_code"]),
                                     bool(c.get("timed_out", False)))
                        for c in data["commands"]],
                       Counter({str(k): int(v) for k, v in data.get("folded", {}).items()}))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise WorkLogError(f"not a work log: {exc!r}") from None


class _Part:
    """One kind of entry while rendering: its lines, and which of them are folded.

    Kept lines are ``lines[:head] + lines[cut:]``; everything between is folded, oldest
    first. Sizes are kept incrementally so folding thousands of entries stays linear.
    """

    def __init__(self, title: str, lines: list[str], weights: list[Counter[str]],
                 folded: Counter[str], fold_text: Callable[[Counter[str]], str],
                 head: int = 0) -> None:
        self.title = title
        self.entries = lines
        self.weights = weights
        self.folded = folded
        self.fold_text = fold_text
        self.head = min(head, len(lines))
        self.cut = self.head
        self.kept_chars = sum(len(line) + 1 for line in lines)

    def empty(self) -> bool:
        return not self.entries and not self.folded["n"]

    def kept(self) -> int:
        return self.head + len(self.entries) - self.cut

    def fold_one(self) -> None:
        if self.cut < len(self.entries):
            index, self.cut = self.cut, self.cut + 1
        else:  # only the protected head is left
            self.head, index = self.head - 1, self.head - 1
        self.folded.update(self.weights[index])
        self.kept_chars -= len(self.entries[index]) + 1

    def size(self) -> int:
        fold = len(self.fold_text(self.folded)) + 1 if self.folded["n"] else 0
        return len(self.title) + 1 + self.kept_chars + fold - 1

    def lines(self) -> list[str]:
        if self.empty():
            return []
        fold = [self.fold_text(self.folded)] if self.folded["n"] else []
        return [self.title, *self.entries[:self.head], *fold, *self.entries[self.cut:]]


def _file_line(f: FileEntry) -> str:
    actions = []
    if f.writes:
        actions.append("written" + (f" {f.writes}×" if f.writes > 1 else ""))
    if f.edits:
        actions.append("edited" + (f" {f.edits}×" if f.edits > 1 else ""))
    turns = f"turn {f.last_turn}" if f.first_turn == f.last_turn \
        else f"turns {f.first_turn}–{f.last_turn}"
    return f"- {_short(f.path, PATH_CHARS)}: {', '.join(actions)} ({turns})"


def _command_line(c: CommandEntry) -> str:
    status = "timed out" if c.timed_out else (
        f"exit {c.exit_code}" if c.exit_code is not None else "no exit status")
    return f"- turn {c.turn}, {status}: {c.command}"


def _fold_requests(n: Counter[str]) -> str:
    return f"- … and {_plural(n['n'], 'more request')}"


def _fold_files(n: Counter[str]) -> str:
    return f"- … and {_plural(n['n'], 'earlier file')} ({n['written']} written, " \
           f"{n['edited']} edited)"


def _fold_commands(n: Counter[str]) -> str:
    return f"- … and {_plural(n['n'], 'earlier command')} ({n['ok']} ok, {n['failed']} failed)"


# -- on disk, beside the session ----------------------------------------------------------------

def worklog_path(workspace: Path, name: str) -> Path:
    """Where the log goes, spelt from ``workspace`` (nothing on disk is asked)."""
    return session_dir(workspace, name) / WORKLOG_FILE


def check_worklog_target(workspace: Path, name: str) -> Path:
    """Refuse (:class:`~core.sources.agent.saved.SessionError`, one line) a log path whose folder or
    file is a link, or whose file is no regular file, before any turn runs."""
    return session_file(workspace, name, WORKLOG_FILE, create=False)


def save_worklog(workspace: Path, name: str, log: WorkLog) -> Path:
    """Replace the session's work log atomically (a crash never leaves half a file), in a
    session folder reached without following links (see :mod:`core.sources.agent.saved`)."""
    path = session_file(workspace, name, WORKLOG_FILE, create=True)
    atomic_write_text(path, json.dumps(log.to_json(), ensure_ascii=False, indent=1),
                      durable=True)
    return path


def load_worklog(workspace: Path, name: str) -> WorkLog:
    """The saved log (an empty one when the session has none).

    A link or a special file (a FIFO, a device) in its place is a
    :class:`~core.sources.agent.saved.SessionError`: it is refused, like the session file. A regular
    file that is no readable log — too large, nested too deeply, wrong types — is a
    :class:`WorkLogError` naming the file (the caller sets it aside and starts afresh).
    """
    path = check_worklog_target(workspace, name)
    if not path.exists():
        return WorkLog()
    try:
        data = parse_json(read_limited(path, MAX_WORKLOG_BYTES, follow_links=False),
                          str(path))
    except UntrustedFileError as exc:
        raise WorkLogError(f"{exc}; not a readable work log") from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise WorkLogError(f"{path}: not a version-{VERSION} work log")
    try:
        return WorkLog.from_json(data)
    except WorkLogError as exc:
        raise WorkLogError(f"{path}: {exc}") from None
