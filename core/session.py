"""Saved sessions: the message list after each turn, so a run can be resumed.

Sessions live under ``.ctxlab/sessions/<name>/`` in the workspace. The file is replaced
atomically after every completed turn, so a crash or a network failure mid-turn leaves the
last completed turn on disk, never half a file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core.compact.archive import atomic_write_text
from core.messages import HistoryError, check_history

SESSIONS_DIR = Path(".ctxlab/sessions")
VERSION = 1  # the format save_session writes; any other is refused, not guessed at
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class SessionError(ValueError):
    pass


def session_dir(workspace: Path, name: str) -> Path:
    if not _NAME.fullmatch(name):
        raise SessionError(f"session name {name!r}: use letters, digits, '.', '_' or '-'")
    return Path(workspace) / SESSIONS_DIR / name


def save_session(workspace: Path, name: str, messages: list[dict[str, Any]],
                 turns: int) -> Path:
    path = session_dir(workspace, name) / "session.json"
    data = {"version": VERSION, "turns": turns, "messages": messages}
    atomic_write_text(path, json.dumps(data, ensure_ascii=False), durable=True)
    return path


def check_save_target(workspace: Path, name: str) -> Path:
    """Refuse, before any turn runs, a session path that a save could not replace.

    A ``session.json`` that is a directory (or a socket, a FIFO…) would make every save
    fail after the model had already been called; it is the user's, so it is never removed.
    """
    path = session_dir(workspace, name) / "session.json"
    if path.parent.exists() and not path.parent.is_dir():
        raise SessionError(f"{path.parent} is not a directory; cannot save session {name!r}")
    if path.exists() and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise SessionError(f"{path} is {kind}, not a session file; nothing was changed")
    return path


def load_session(workspace: Path, name: str) -> tuple[list[dict[str, Any]], int]:
    """The saved messages and turn count, or :class:`SessionError` with one line.

    The file is untrusted (it may have been edited by hand or by another program): a
    number JSON cannot hold as an int (``1e400``), absurd nesting, a format version this
    ctxlab does not know, or a negative count is refused by name, and nothing is written.
    """
    path = check_save_target(workspace, name)
    if not path.is_file():
        raise SessionError(f"no saved session {name!r} in {path.parent}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise SessionError(
            f"{path}: not a readable session: nested too deeply to read; nothing was changed"
        ) from None
    except (OSError, ValueError) as exc:
        raise SessionError(f"{path}: not a readable session: {exc}") from None
    try:
        return _checked(data)
    except (SessionError, HistoryError, RecursionError) as exc:
        reason = "nested too deeply to read" if isinstance(exc, RecursionError) else exc
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
