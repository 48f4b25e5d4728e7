"""Messages JSON: a history in the Messages API's own shape.

Either a JSON array of messages or an object with a ``messages`` array (a request body
saved whole also fits: ``system`` is read, ``model`` too). Every assistant message is one
request: the messages before it (since the previous assistant message) are its input.

Read: ``messages[].role``, ``messages[].content``, ``system`` (a string or text blocks),
``model``. Ignored: ``tools``, ``max_tokens`` and every other key of the object, any key
of a message other than ``role`` and ``content``. A message that is not an object or has
another role is skipped and reported with its index.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.compact.managers import Manager
from core.messages import system_text
from core.sources.replay.model import Recording, ReplayError
from core.sources.replay.shape import content_problem
from core.sources.replay.steps import StepBuilder
from core.untrusted import MAX_DEPTH, too_deep


def load(path: Path, text: str) -> Recording:
    try:
        data = json.loads(text)
    except (RecursionError, MemoryError):
        raise ReplayError(f"{path}: is nested too deeply to read") from None
    except ValueError as exc:
        where = (f"line {exc.lineno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError)
                 else str(exc))
        raise ReplayError(f"{path}: not valid JSON ({where})") from None
    if too_deep(data, MAX_DEPTH):
        # Measuring and copying the history recurse; one document is one answer.
        raise ReplayError(f"{path}: is nested more than {MAX_DEPTH} levels deep")
    recording = Recording(format="messages", path=path, agent=Manager.AGENT)
    if isinstance(data, dict):
        recording.system = system_text(data.get("system"))
        recording.model = data.get("model") if isinstance(data.get("model"), str) else None
        data = data.get("messages")
    if not isinstance(data, list):
        raise ReplayError(f"{path}: expected a JSON array of messages or an object with a "
                          "\"messages\" array")
    steps = StepBuilder(recording)
    recording.lines_total = len(data)
    for index, message in enumerate(data):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            recording.note("malformed", f"message {index} is not a user or assistant "
                           "message; skipped")
            recording.skipped["malformed"] += 1
            continue
        content = message.get("content", "")
        problem = content_problem(content, f"messages[{index}].content")
        if problem:
            recording.note("malformed", f"message {index}: {problem}; skipped")
            recording.skipped["malformed"] += 1
            continue
        recording.lines_read += 1
        if role == "user":
            steps.user(content)
        else:
            steps.assistant(content if isinstance(content, list)
                            else [{"type": "text", "text": content or ""}],
                            message_id=f"message-{index}")
    steps.finish()
    return recording
