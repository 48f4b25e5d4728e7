"""The older Codex rollout layout (Codex CLI 0.2x, 2025), read as the current one.

Before rollouts wrapped every line in ``{"timestamp", "type", "payload"}``, Codex wrote:

* a first line that is the session itself: ``{"id", "timestamp", "instructions", "git"?}``
  (``instructions`` null unless the user gave some);
* ``{"record_type": "state", …}`` lines, bookkeeping for resuming (no content);
* every Responses item bare, one per line (``{"type": "message", "role": "user", …}``,
  ``reasoning``, ``function_call``, ``function_call_output``…).

That layout records no usage and no compaction (0.20 wrote none), so such a rollout
replays with the estimated ratio. Each line is given the envelope the current layout has,
so one reader serves both.
"""

from __future__ import annotations

from typing import Any

SESSION_KEYS = frozenset({"id", "timestamp"})


def is_session_line(data: Any) -> bool:
    """The first line of the older layout: a session object, with no envelope."""
    return isinstance(data, dict) and set(data) >= SESSION_KEYS and "payload" not in data \
        and "type" not in data and ("instructions" in data or "git" in data)


def enveloped(data: dict[str, Any], first: bool) -> tuple[str, dict[str, Any]]:
    """``(type, payload)`` of one line of the older layout, as the current layout has it."""
    if first and is_session_line(data):
        return "session_meta", data
    if "record_type" in data:
        return f"record_type:{data.get('record_type')}", data
    return "response_item", data
