"""Saved sessions: the message list after each turn, so a run can be resumed.

Sessions live under ``.ctxlab/sessions/<name>/`` in the workspace. The file is replaced
atomically after every completed turn, so a crash or a network failure mid-turn leaves the
last completed turn on disk, never half a file.

A workspace can ship links (a cloned repository does): ``.ctxlab``, ``sessions`` or the
session's folder linked to a place outside would have every save written there, so the
folder is reached through :func:`core.harness_paths.harness_dir` (each component a real
folder inside the workspace) and the files in it must not be links either; a link is
refused with one line (a :class:`SessionError`, exit 2) before anything is written.

A session file is read as untrusted (:mod:`core.untrusted`): it may have been edited by hand,
by another program, or replaced by a FIFO or a link to ``/dev/zero``. Each of those — and a
file too large, nested too deeply or holding the wrong types — is one line naming the file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from core.archive.atomic import atomic_write_text
from core.harness_paths import HarnessPathError, check_harness_file, harness_dir
from core.messages import HistoryError, check_history
from core.untrusted import UntrustedFileError, parse_json, read_limited

SESSIONS_DIR = Path(".ctxlab/sessions")
VERSION = 1  # the format save_session writes; any other is refused, not guessed at
SESSION_FILE = "session.json"
# A session holds the context as sent (a few MB at most: the window is bounded); far past
# that is no session ctxlab wrote, and reading it whole would only fill memory.
MAX_SESSION_BYTES = 256 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class SessionError(ValueError):
    pass


def session_dir(workspace: Path, name: str) -> Path:
    """Where the session's files go, spelt from ``workspace`` (nothing on disk is asked)."""
    if not _NAME.fullmatch(name):
        raise SessionError(f"session name {name!r}: use letters, digits, '.', '_' or '-'")
    return Path(workspace) / SESSIONS_DIR / name


def session_file(workspace: Path, name: str, filename: str, *, create: bool) -> Path:
    """``filename`` in the session's folder, once the folder is known to be a real one
    inside the workspace (made with ``create``) and the file is no link or special file.

    Raises :class:`SessionError` with one line; nothing the user had is changed.
    """
    session_dir(workspace, name)  # the name is checked first
    if create:
        os.makedirs(workspace, exist_ok=True)  # the workspace is the caller's; ours start below
    try:
        folder = harness_dir(workspace, SESSIONS_DIR / name, create=create)
    except HarnessPathError as exc:
        raise SessionError(f"{exc}; nothing was changed") from None
    path = folder / filename
    try:
        check_harness_file(path)
    except HarnessPathError as exc:
        raise SessionError(f"{exc}; nothing was changed") from None
    except OSError as exc:
        raise SessionError(f"{path}: cannot be used ({exc.strerror or exc})") from None
    return path


def save_session(workspace: Path, name: str, messages: list[dict[str, Any]],
                 turns: int) -> Path:
    path = session_file(workspace, name, SESSION_FILE, create=True)
    data = {"version": VERSION, "turns": turns, "messages": messages}
    atomic_write_text(path, json.dumps(data, ensure_ascii=False), durable=True)
    return path


def check_save_target(workspace: Path, name: str) -> Path:
    """Refuse, before any turn runs, a session path that a save could not replace, or
    would write through a link.

    A ``session.json`` that is a directory (or a socket, a FIFO…) would make every save
    fail after the model had already been called; it is the user's, so it is never removed.
    """
    return session_file(workspace, name, SESSION_FILE, create=False)


def load_session(workspace: Path, name: str) -> tuple[list[dict[str, Any]], int]:
    """The saved messages and turn count, or :class:`SessionError` with one line.

    The file is untrusted (it may have been edited by hand or by another program): a
    number JSON cannot hold as an int (``1e400``), absurd nesting, a format version this
    ctxlab does not know, or a negative count is refused by name, and nothing is written.
    """
    path = check_save_target(workspace, name)
    if not os.path.lexists(path):
        raise SessionError(f"no saved session {name!r} in {path.parent}")
    try:
        raw = read_limited(path, MAX_SESSION_BYTES, follow_links=False)
        data = parse_json(raw, str(path))
    except UntrustedFileError as exc:
        raise SessionError(f"{exc}; not a readable session, nothing was changed") from None
    try:
        return _checked(data)
    except (SessionError, HistoryError, RecursionError, MemoryError) as exc:
        reason = ("nested too deeply to read" if isinstance(exc, RecursionError)
                  else "too large to read" if isinstance(exc, MemoryError) else exc)
        raise SessionError(f"{path}: not a readable session: {reason}; nothing was changed") \
            from None


def _checked(data: Any) -> tuple[list[dict[str, Any]], int]:
    if not isinstance(data, dict):
        raise SessionError(f"not a session: expected a JSON object, got {type(data).__name__}")
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        shown = "no version" if "version" not in data else f"version {version!r}"
        raise SessionError(f"{shown} is not a session format this ctxlab reads ({VERSION})")
    turns = data.get("turns", 0)
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
        raise SessionError(f"'turns' must be a whole number of at least 0, got {turns!r}")
    if "messages" not in data:
        raise SessionError("missing 'messages'")
    return check_history(data["messages"]), turns


def history_from_document(data: Any) -> list[dict[str, Any]]:
    """The messages of a JSON document: a bare message array, or a session file this module
    wrote (``{"version": 1, "turns": …, "messages": […]}``), checked either way.

    ``ctxlab compact`` takes both, so a saved session can be compacted as it is.
    """
    if isinstance(data, dict) and "messages" in data:
        try:
            return _checked(data)[0]  # the same checks as a resumed session
        except SessionError as exc:
            raise HistoryError(f"session file: {exc}") from None
    if not isinstance(data, list):
        raise HistoryError(f"expected a JSON array of messages or a ctxlab session file "
                           f"(an object with \"messages\"), got {type(data).__name__}")
    return check_history(data)
