"""Which file a tool call reads, or writes, for the "re-read" facts of :mod:`core.whatif.facts`.

A re-read is evidence that the agent needed a file's content again; when a strategy had
dropped the earlier result by then, the re-read is a likely cost of that strategy. Agents read
files two ways: a read tool naming the file (Claude Code's ``Read``, ``read_file``…: the name
comes from :func:`core.views.items.call_target`, as the Items view names it) or a plain shell
command (Codex's ``cat notes.txt``, ``sed -n '1,80p' a.py``). Only a single plain command
counts: a pipe, a redirection or a chain may print something else than the file.

A read covers a *span*: ``""`` for the whole file, else the range as given (``Read``'s
offset and limit, ``sed``'s script, ``head``'s count), so a later read of another part of
the file is not taken for reading the same content again.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Read:
    """A file a tool call reads: its normalised path and the span read (``""``: all)."""

    path: str
    span: str = ""

    def covers(self, later: Read) -> bool:
        """Whether this read already returned what ``later`` reads."""
        return self.path == later.path and self.span in ("", later.span)


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
        return Read(normalise(path, workdir), span)
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
    elif name in SPANNED:  # head / tail: -n N or -N
        if options == ["-n"] and len(files) == 2 and files[0].isdigit():
            options, files = [f"-n{files[0]}"], files[1:]
        span = f"{name} {' '.join(options)}" if options else name
    if len(files) != 1:
        return None
    return Read(normalise(files[0], workdir), span)
