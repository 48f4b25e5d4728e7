"""``glob{pattern}``: list workspace paths matching a pattern (``**`` recurses).

Patterns are checked before use (no absolute patterns, no ``..``) and every match is checked
after, because a symlinked directory inside the workspace can still lead outside it. At
most ``limit`` matches are shown (200, as in the course), followed by how many were held
back, so the model knows to narrow the pattern rather than assume it saw everything.
"""

from __future__ import annotations

import glob as globlib
from pathlib import Path
from typing import Any

from core.tools.confine import PathRefused, check_glob_pattern, is_inside
from core.tools.outcome import ToolOutcome, error

SCHEMA: dict[str, Any] = {
    "name": "glob",
    "description": "Find files matching a glob pattern; ** matches recursively.",
    "input_schema": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
}

DEFAULT_LIMIT = 200


def matches_inside(root: Path, pattern: str) -> list[str]:
    """Sorted, de-duplicated matches whose real location is inside ``root``."""
    found = globlib.glob(pattern, root_dir=root, recursive=True)
    return sorted({m for m in found if is_inside(root, root / m)})


def glob_files(root: Path, pattern: object, limit: int = DEFAULT_LIMIT) -> ToolOutcome:
    try:
        checked = check_glob_pattern(pattern)
        matches = matches_inside(root, checked)
    except PathRefused as exc:
        return error(str(exc), exc.kind)
    except (OSError, ValueError) as exc:
        return error(f"bad pattern {pattern!r}: {exc}", "bad_input")
    meta = {"pattern": checked, "matches": len(matches), "shown": min(len(matches), limit)}
    if not matches:
        return ToolOutcome(content="(no matches)", meta=meta)
    shown = matches[:limit]
    hidden = len(matches) - len(shown)
    if hidden:
        shown.append(f"... ({hidden} more matches not shown; narrow the pattern)")
    return ToolOutcome(content="\n".join(shown), meta=meta)
