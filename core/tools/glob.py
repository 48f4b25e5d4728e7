"""``glob{pattern}``: list workspace paths matching a pattern (``**`` recurses).

Patterns are checked before use (no absolute patterns, no ``..``) and every match is checked
after, because a symlinked directory inside the workspace can still lead outside it. At
most ``limit`` matches are shown (200, as in the course), followed by how many were held
back, so the model knows to narrow the pattern rather than assume it saw everything.

The walk is ctxlab's own rather than :func:`glob.glob`, because the standard one follows
directory symlinks under ``**``: two links to ``.`` (``ln -s . l1; ln -s . l2``) make
``**`` enumerate ``l1/l2/l1/…`` until the kernel's symlink limit — 2⁴⁰ paths, a turn that
never ends. Here ``**`` descends only into real directories (a symlink is still listed by
its own name, as :mod:`pathlib` does since Python 3.13), a literal or single-wildcard step
may pass through a link (the pattern's length bounds those), and every search is bounded:
it stops after :data:`MAX_MATCHES` matches or :data:`TIME_LIMIT` seconds, or as soon as the
caller sets its ``stop`` event (the tool runner does when the turn is cancelled), and says
so in the result. Hidden names match only a pattern part that starts with ``.``, as in
:func:`glob.glob`.

A name byte that is not UTF-8 is listed as a ``\\xNN`` escape (:mod:`core.tools.encoding`),
so the list is always valid Unicode; patterns match that spelling, and the other file tools
accept it back.
"""

from __future__ import annotations

import fnmatch
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, check_glob_pattern, is_inside
from core.tools.encoding import has_byte_escape, shown, unescaped
from core.tools.outcome import ToolOutcome, error

SCHEMA: dict[str, Any] = {
    "name": "glob",
    "description": (
        "Find files matching a glob pattern; ** matches recursively. A name byte that is "
        "not UTF-8 is shown as \\xNN; use that spelling in paths and patterns."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
}

DEFAULT_LIMIT = 200
MAX_MATCHES = 10_000
TIME_LIMIT = 10.0

_MAGIC = frozenset("*?[")


@dataclass
class Search:
    """One bounded walk: where it stopped early (``stopped``) and what it found so far."""

    root: Path
    parts: list[str]
    dirs_only: bool
    deadline: float
    stop: threading.Event | None
    max_matches: int
    found: set[str] = field(default_factory=set)
    stopped: str | None = None

    def should_stop(self) -> bool:
        if self.stop is not None and self.stop.is_set():
            self.stopped = "cancelled"
        elif len(self.found) >= self.max_matches:
            self.stopped = "matches"
        elif time.monotonic() > self.deadline:
            self.stopped = "time"
        return self.stopped is not None

    def emit(self, rel: str) -> None:
        if len(self.found) >= self.max_matches:
            self.stopped = "matches"
        elif not self.dirs_only:
            self.found.add(rel)
        elif os.path.isdir(self.root / rel):
            self.found.add(rel.rstrip("/") + "/")


def _entries(root: Path, rel: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root / rel if rel else root) as it:
            return list(it)
    except OSError:  # unreadable, vanished, or not a directory after all
        return []


def _visible(name: str, part: str) -> bool:
    return not name.startswith(".") or part.startswith(".")


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _literal(root: Path, rel: str, part: str) -> str:
    """A wildcard-free step: the name as spelled, or the raw name its ``\\xNN`` escapes
    stand for when only that one exists."""
    child = _join(rel, part)
    if has_byte_escape(part) and not os.path.lexists(root / child):
        raw = _join(rel, unescaped(part))
        if os.path.lexists(root / raw):
            return raw
    return child


Todo = list[tuple[str, int, bool]]


def _step(search: Search, rel: str, idx: int, nested: bool, todo: Todo) -> None:
    """Match pattern part ``idx`` inside directory ``rel``; queue what still needs walking.

    ``nested`` says ``rel`` was reached by a ``**`` that already listed it."""
    parts, root = search.parts, search.root
    if idx == len(parts):
        search.emit(rel)
        return
    part, last = parts[idx], idx == len(parts) - 1
    if part == "**":
        if last:
            if rel and not nested:
                search.emit(rel + "/")
        else:
            todo.append((rel, idx + 1, False))  # ``**`` matching no directory at all
        for entry in _entries(root, rel):
            if search.stopped:
                return
            if not _visible(entry.name, part):
                continue
            child = _join(rel, entry.name)
            if last:
                search.emit(child)
            if entry.is_dir(follow_symlinks=False):  # never through a link: no loops
                todo.append((child, idx, True))
        return
    if not _MAGIC.intersection(part):
        child = _literal(root, rel, part)
        if last:
            if os.path.lexists(root / child):
                search.emit(child)
        elif os.path.isdir(root / child):
            todo.append((child, idx + 1, False))
        return
    for entry in _entries(root, rel):
        if search.stopped:
            return
        if not _visible(entry.name, part) or not fnmatch.fnmatchcase(shown(entry.name), part):
            continue
        child = _join(rel, entry.name)
        if last:
            search.emit(child)
        elif entry.is_dir():
            todo.append((child, idx + 1, False))


def walk(search: Search) -> None:
    """Depth-first over (directory, pattern part) pairs, each visited once, until done or
    stopped. An explicit stack rather than recursion: a real tree can be deeper than
    Python's recursion limit."""
    todo: Todo = [("", 0, False)]
    seen: set[tuple[str, int, bool]] = set()
    while todo:
        if search.should_stop():
            return
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        _step(search, *item, todo)


def matches_inside(
    root: Path,
    pattern: str,
    *,
    stop: threading.Event | None = None,
    time_limit: float = TIME_LIMIT,
    max_matches: int = MAX_MATCHES,
) -> tuple[list[str], str | None]:
    """Sorted matches whose real location is inside ``root``, and why the walk stopped
    early (``"time"``, ``"matches"``, ``"cancelled"``) or ``None`` if it finished."""
    search = Search(
        root=root,
        parts=[p for p in pattern.split("/") if p],
        dirs_only=pattern.endswith("/"),
        deadline=time.monotonic() + time_limit,
        stop=stop,
        max_matches=max_matches,
    )
    walk(search)
    return sorted(m for m in search.found if is_inside(root, root / m)), search.stopped


_STOPPED = {
    "time": "the search stopped after {secs:g} s",
    "matches": "the search stopped after {count:,} matches",
    "cancelled": "the search was cancelled",
}


def glob_files(
    root: Path,
    pattern: object,
    limit: int = DEFAULT_LIMIT,
    *,
    stop: threading.Event | None = None,
    time_limit: float = TIME_LIMIT,
    max_matches: int = MAX_MATCHES,
) -> ToolOutcome:
    try:
        checked = check_glob_pattern(pattern)
        matches, stopped = matches_inside(
            root, checked, stop=stop, time_limit=time_limit, max_matches=max_matches
        )
    except PathRefused as exc:
        return error(str(exc), exc.kind)
    except (OSError, ValueError) as exc:
        return error(f"bad pattern {pattern!r}: {exc}", "bad_input")
    meta: dict[str, Any] = {
        "pattern": checked,
        "matches": len(matches),
        "shown": min(len(matches), limit),
    }
    lines = [shown(m) for m in matches[:limit]]
    hidden = len(matches) - len(lines)
    if hidden:
        lines.append(f"... ({hidden} more matches not shown; narrow the pattern)")
    if stopped:
        meta["stopped"] = stopped
        why = _STOPPED[stopped].format(secs=time_limit, count=max_matches)
        lines.append(f"... ({why}; the list is incomplete; narrow the pattern)")
    elif not matches:
        return ToolOutcome(content="(no matches)", meta=meta)
    return ToolOutcome(content="\n".join(lines), meta=meta)
