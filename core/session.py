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
SESSION_VERSION = 1
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
    data = {"version": SESSION_VERSION, "turns": turns, "messages": messages}
    atomic_write_text(path, json.dumps(data, ensure_ascii=False), durable=True)
    return path


def load_session(workspace: Path, name: str) -> tuple[list[dict[str, Any]], int]:
    path = session_dir(workspace, name) / "session.json"
    if not path.is_file():
        raise SessionError(f"no saved session {name!r} in {path.parent}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        messages = check_history(data["messages"])
        return messages, int(data.get("turns", 0))
    except (ValueError, KeyError, TypeError, HistoryError) as exc:
        raise SessionError(f"{path}: not a readable session: {exc}") from None


def history_from_document(data: Any) -> list[dict[str, Any]]:
    """The messages of a JSON document: a bare message array, or a session file this module
    wrote (``{"version": 1, "turns": …, "messages": […]}``), checked either way.

    ``ctxlab compact`` takes both, so a saved session can be compacted as it is.
    """
    if isinstance(data, dict) and "messages" in data:
        version = data.get("version")
        if version != SESSION_VERSION:
            raise HistoryError(f"session file version {version!r}: this ctxlab reads "
                               f"version {SESSION_VERSION}")
        return check_history(data["messages"])
    if not isinstance(data, list):
        raise HistoryError(f"expected a JSON array of messages or a ctxlab session file "
                           f"(an object with \"messages\"), got {type(data).__name__}")
    return check_history(data)
