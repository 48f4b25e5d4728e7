"""Which file a tool call reads, or writes, for the "re-read" facts of :mod:`core.whatif.facts`.

A re-read is evidence that the agent needed a file's content again; when a strategy had
dropped the earlier result by then, the re-read is a likely cost of that strategy. Agents read
files two ways: a read tool naming the file (Claude Code's ``Read``, ``read_file``…: the name
comes from :func:`core.views.items.call_target`, as the Items view names it) or a plain shell
command (Codex's ``cat notes.txt``, ``sed -n '1,80p' a.py``). Only a single plain command
counts: a pipe, a redirection or a chain may print something else than the file.

A read covers a *span*: ``""`` for the whole file, else the range as given (``Read``'s
offset and limit, ``sed``'s script, ``head``'s count), so a later read of another part of
the file is not taken for reading the same content again. A "whole" read may not be whole:
Claude Code's ``Read`` returns at most :data:`READ_CAPS` lines unless told otherwise, so a
whole read that came back that long covers only the lines it returned (its last line number),
and a later read past them, or of lines it cannot place, is new content.

A write makes the next read of the file new content too. Edit/Write-like tools and
``apply_patch`` name what they write; a shell command does not say, so the rule is
conservative: a shell call that is not a *plain read* and names a file (a word equal to its
path, or a relative word its path ends with) is taken to write it (``sed -i``,
``echo … > f``, ``tee``, ``cp``/``mv``, ``git checkout``, a script given the file); a glob
names the files it matches, and a command that changes files it need not name
(:data:`WRITE_ANY`: ``patch``, ``git apply``, ``git checkout`` / ``reset``…) every file.
A plain read is one command, no pipe, redirection or chain, that reads (:func:`read_of`) or
only inspects files (:data:`INSPECTORS`, ``git diff``/``log``/``show``…). Taking a read for a
write only loses a re-read fact; taking a write for a read would claim one that is not.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from core.views.items import READ_TOOLS, TARGET, call_target

# Tools that change a file, and the input key naming it: after one, an earlier read no
# longer holds the file's content, so reading it again is no re-read.
WRITE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
               "NotebookEdit": "notebook_path", "write_file": "path", "edit_file": "path"}
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
SHELLS = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"}
WHOLE_FILE = {"cat", "nl", "bat"}
SPANNED = {"head", "tail", "sed"}
NOT_PLAIN = set("|;&<>`$")  # a command with one of these does more than print a file
READ_CAPS = {"Read": 2000}  # lines a whole read returns at most (Claude Code's default limit)
SHELL_TOOLS = {"Bash", "bash", "shell", "exec_command", "local_shell", "run_shell_command",
               "run_terminal_cmd", "execute_command", "container.exec"}
# Commands that only look at the files they name; with git, its read-only subcommands.
INSPECTORS = {"cat", "nl", "bat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg",
              "ag", "wc", "ls", "stat", "file", "diff", "cmp", "md5sum", "sha1sum",
              "sha256sum", "du", "tree"}
GIT_INSPECTORS = {"diff", "log", "show", "status", "blame", "grep", "ls-files"}
WRITE_ANY = {"patch", "git apply", "git am", "git checkout", "git restore", "git reset",
             "git stash", "git switch", "git merge", "git rebase", "git pull",
             "git cherry-pick", "git revert"}
ANY_FILE = "*"  # a word that names every file
LINE_NUMBERS = re.compile(r"^\s*(\d+)(?:\t|\u2192)", re.MULTILINE)  # "    12\t" / "    12→"
SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


@dataclass(frozen=True)
class Read:
    """A file a tool call reads: its normalised path and the span read (``""``: all)."""

    path: str
    span: str = ""
    # The lines read as (first, how many; None: to the end), when the span says; and the
    # most lines the tool returns for a whole read. Detail of the span, not its identity.
    lines: tuple[int, int | None] | None = field(default=None, compare=False)
    cap: int | None = field(default=None, compare=False)

    def covers(self, later: Read, returned: int | None = None) -> bool:
        """Whether this read already returned what ``later`` reads; ``returned``: the
        last line number this read's result held (a capped whole read holds no more)."""
        if self.path != later.path or self.span not in ("", later.span):
            return False
        if self.span == later.span or self.cap is None or returned is None \
                or returned < self.cap:
            return True  # the same span, or the whole file came back
        if later.lines is None:
            return False  # lines it cannot place: maybe past what came back
        first, count = later.lines
        return count is not None and first + count - 1 <= returned


def lines_returned(text: str) -> int:
    """The last line number a read's result shows (its line-number prefixes), else its
    line count."""
    numbers = [int(n) for n in LINE_NUMBERS.findall(text)]
    return max(numbers) if numbers else len(text.splitlines())


def normalise(path: str, workdir: Any = None) -> str:
    """One spelling per file: relative paths joined to the call's ``workdir`` when it has
    one, then ``.``/``..`` and doubled slashes folded."""
    if not path.startswith("/") and isinstance(workdir, str) and workdir:
        path = posixpath.join(workdir, path)
    return posixpath.normpath(path)


def read_of(tool: str, given: Any) -> Read | None:
    """The file ``tool`` called with ``given`` reads, or ``None``."""
    workdir = given.get("workdir") if isinstance(given, dict) else None
    if tool in READ_TOOLS:
        path = call_target(tool, given)
        if not path or not isinstance(given, dict):
            return None
        span = ":".join(str(given.get(k, "")) for k in ("offset", "limit")
                        if given.get(k) is not None)
        return Read(normalise(path, workdir), span, _asked(given), READ_CAPS.get(tool))
    command = call_target(tool, given)
    if not command or len(command) >= TARGET or NOT_PLAIN & set(command):
        return None
    words = _words(command)
    return _shell_read(words, workdir) if words else None


def written_by(tool: str, given: Any) -> list[str]:
    """The files ``tool`` called with ``given`` changes (normalised)."""
    if not isinstance(given, dict):
        return []
    workdir = given.get("workdir")
    key = WRITE_TOOLS.get(tool)
    if key and isinstance(given.get(key), str):
        return [normalise(given[key], workdir)]
    patch = given.get("input") if tool == "apply_patch" else None
    if isinstance(patch, str):
        return [normalise(p, workdir) for p in PATCH_FILE.findall(patch)]
    return []


def shell_named(tool: str, given: Any) -> frozenset[str]:
    """The words of a shell call that is not a plain read (module docstring), as paths;
    empty for any other call. :func:`names` says whether they name a file."""
    command = _command(given) if tool in SHELL_TOOLS else ""
    if not command or read_of(tool, given) is not None or _inspects(command):
        return frozenset()
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # an unbalanced quote: its words as they stand
        words = command.split()
    workdir = given.get("workdir") if isinstance(given, dict) else None
    named = {normalise(part, workdir) for word in words
             for part in (word, word.rpartition("=")[2]) if part.strip("./")}
    commands = {" ".join(words[i:i + 2]) for i in range(len(words))} | set(words)
    return frozenset(named | ({ANY_FILE} if commands & WRITE_ANY else set()))


def names(words: frozenset[str], path: str) -> bool:
    """Whether a shell call's words name ``path``: the path itself, a relative word the
    path ends with (a call without its working directory), or a glob matching it."""
    if path in words:
        return True
    for word in words:
        relative = not word.startswith("/")
        if relative and path.endswith("/" + word):
            return True
        if any(c in word for c in "*?[") and (fnmatch.fnmatchcase(path, word) or (
                relative and fnmatch.fnmatchcase(path, "*/" + word))):
            return True
    return False


def _command(given: Any) -> str:
    """A shell call's command line, whole (a ``bash -lc`` argv as its script)."""
    if not isinstance(given, dict):
        return given if isinstance(given, str) else ""
    value = given.get("command", given.get("cmd"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = shlex.join(value)
    if not isinstance(value, str):
        return ""
    try:  # a bash -lc wrapper: its script
        words = shlex.split(value)
    except ValueError:
        return value
    if len(words) >= 3 and words[0] in SHELLS and words[1] in ("-c", "-lc"):
        return words[2] if len(words) == 3 else shlex.join(words[2:])
    return value


def _inspects(command: str) -> bool:
    """One command, nothing chained or redirected, that only looks at files."""
    if NOT_PLAIN & set(command):
        return False
    words = _words(command)
    if not words:
        return False
    name = posixpath.basename(words[0])
    if name == "git":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return bool(rest) and rest[0] in GIT_INSPECTORS
    return name in INSPECTORS


def _asked(given: dict[str, Any]) -> tuple[int, int | None] | None:
    """A read tool's lines as (first, how many): its offset (1-based) and limit."""
    offset, limit = given.get("offset"), given.get("limit")
    if offset is None and limit is None:
        return None
    first = offset if isinstance(offset, int) and offset > 0 else 1
    return first, limit if isinstance(limit, int) and limit > 0 else None


def _words(command: str) -> list[str]:
    """The command's words, a ``bash -lc '…'`` wrapper taken off."""
    try:
        words = shlex.split(command)
        if len(words) >= 3 and words[0] in SHELLS and words[1] in ("-c", "-lc"):
            rest = words[2:]
            words = shlex.split(rest[0]) if len(rest) == 1 else rest
    except ValueError:  # an unbalanced quote: no plain command
        return []
    return words


def _shell_read(words: list[str], workdir: Any) -> Read | None:
    """``cat FILE`` / ``nl -ba FILE`` (the whole file), ``head -n 40 FILE`` /
    ``sed -n '1,80p' FILE`` (a span of it): one file, else ``None``."""
    name = posixpath.basename(words[0])
    if name not in WHOLE_FILE and name not in SPANNED:
        return None
    files = [w for w in words[1:] if not w.startswith("-")]
    options = [w for w in words[1:] if w.startswith("-")]
    span = ""
    if name == "sed":  # sed -n 'A,Bp' FILE: the script is the span
        if options != ["-n"] or len(files) != 2 or not files[0].endswith("p"):
            return None
        span, files = files[0], files[1:]
        lines = _sed_lines(span)
    elif name in SPANNED:  # head / tail: -n N or -N
        if options == ["-n"] and len(files) == 2 and files[0].isdigit():
            options, files = [f"-n{files[0]}"], files[1:]
        span = f"{name} {' '.join(options)}" if options else name
        count = options[0].removeprefix("-n").removeprefix("-") if len(options) == 1 else ""
        lines = (1, int(count)) if name == "head" and count.isdigit() else None
    else:
        lines = None
    if len(files) != 1:
        return None
    return Read(normalise(files[0], workdir), span, lines)


def _sed_lines(script: str) -> tuple[int, int | None] | None:
    """``sed -n 'A,Bp'`` as (A, B - A + 1); ``'Ap'`` as (A, 1)."""
    found = SED_RANGE.match(script)
    if found is None:
        return None
    first = int(found[1])
    last = int(found[2]) if found[2] else first
    return (first, last - first + 1) if last >= first else None
