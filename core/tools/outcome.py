"""What a tool hands back to the loop: text for the model, plus facts for the work log.

``content`` is exactly what goes into the ``tool_result`` block. ``meta`` is never shown to
the model; it carries what a log or the UI wants without parsing text (the path a write
touched, a command's exit code, why a call was refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ToolOutcome:
    content: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    # When ``content`` is only a preview: a temporary file holding the whole output, which
    # the loop moves into the archive (see ``Agent._archive_full_output``).
    full_output: Path | None = None


def error(message: str, kind: str, **meta: Any) -> ToolOutcome:
    """A refused or failed call. The ``Error:`` prefix matches the course's tools, so a
    learner sees the same text in both; ``kind`` lets a log group failures."""
    return ToolOutcome(content=f"Error: {message}", is_error=True, meta={"error": kind, **meta})
