"""Workspace confinement: the one place that decides whether a path may be touched.

Every file tool resolves the model's path here, so the rules cannot drift apart between
tools: a path is resolved against the workspace *after* following symlinks (a link that
points outside is an escape, however innocent its name), absolute paths are accepted only
when they land inside, and glob patterns may not climb out with ``..``. Writes are refused
inside the directories the harness owns (``.memory/`` belongs to the memory subsystem,
``.ctxlab/`` to ctxlab itself, ``.task_outputs/`` and ``.transcripts/`` hold the archive
that context pointers lead to), because a general tool writing there would bypass the
gates that keep those stores valid — or make a pointer lead to bytes that are not the
ones it replaced.

Names that are not UTF-8 are shown with ``\\xNN`` escapes (:mod:`core.tools.encoding`);
a path spelled that way resolves to the raw name when no file carries the literal spelling.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from core.tools.encoding import fs_encodable, has_byte_escape, shown, unescaped

# Directories (first path component) that general tools may read but never write.
PROTECTED_DIRS: dict[str, str] = {
    ".memory": "memory belongs to the memory subsystem",
    ".ctxlab": "it holds ctxlab's own state",
    ".task_outputs": "it holds the archived tool results that context pointers lead to",
    ".transcripts": "it holds the archived conversation that summaries point to",
}


class PathRefused(Exception):
    """A path or pattern the tools will not use; ``kind`` names the rule that refused it."""

    def __init__(self, message: str, *, kind: str = "outside_workspace") -> None:
        super().__init__(shown(message))  # it may quote the path: keep it encodable
        self.kind = kind


def workspace_root(workspace: Path) -> Path:
    """The canonical workspace: resolved once so every comparison uses the same spelling."""
    return Path(workspace).expanduser().resolve()


def resolve_in_workspace(root: Path, raw: object) -> Path:
    """Resolve ``raw`` (relative to ``root``, or absolute) and require it inside ``root``.

    Symlinks are followed before the check, so a link to ``/etc`` is refused even though its
    own name lies inside. ``root`` must already be canonical (see :func:`workspace_root`).
    """
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused("path must be a non-empty string", kind="bad_input")
    if "\x00" in raw:
        raise PathRefused("path contains a NUL character", kind="bad_input")
    if not fs_encodable(raw):
        raise PathRefused(f"{raw} holds a lone surrogate, which no file name can hold",
                          kind="bad_input")
    candidate = _spelled(root, raw)
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops, unreadable components
        raise PathRefused(f"cannot resolve {raw}: {exc}") from exc
    if resolved.is_relative_to(root):
        return resolved
    lexical = Path(os.path.normpath(candidate))
    if lexical.is_relative_to(root):
        raise PathRefused(
            f"{raw} leads through a symlink to {resolved}, which is outside the workspace"
        )
    raise PathRefused(f"{raw} is outside the workspace")


def _spelled(root: Path, raw: str) -> Path:
    """``raw`` as a path under ``root``. A ``\\xNN`` escape stands for a raw byte when no
    file has the literal name and the raw spelling exists (or, for a new file, its folder
    does): the literal spelling always wins, so a name that really holds a backslash
    stays reachable."""
    literal = Path(raw) if Path(raw).is_absolute() else root / raw
    if not has_byte_escape(raw) or os.path.lexists(literal):
        return literal
    raw_bytes = Path(unescaped(raw))
    alternative = raw_bytes if raw_bytes.is_absolute() else root / raw_bytes
    if os.path.lexists(alternative) or (
        os.path.lexists(alternative.parent) and not os.path.lexists(literal.parent)
    ):
        return alternative
    return literal


def relative(root: Path, path: Path) -> str:
    """The workspace-relative spelling (forward slashes) used in results and work logs;
    a byte that is not UTF-8 is shown as ``\\xNN`` so the text stays valid Unicode."""
    rel = path.relative_to(root).as_posix()
    return shown(rel) or "."


def check_writable(root: Path, path: Path) -> None:
    """Refuse writes to the workspace itself and to the harness-owned directories."""
    if path == root:
        raise PathRefused("cannot write to the workspace directory itself", kind="bad_input")
    first = path.relative_to(root).parts[0]
    for name, why in PROTECTED_DIRS.items():
        # casefold: on case-insensitive filesystems ".Memory" is the same directory
        if first.casefold() == name:
            raise PathRefused(
                f"{relative(root, path)} is inside {name}/, which general tools may not "
                f"write ({why})",
                kind="protected",
            )


def resolve_writable(root: Path, path: object) -> Path:
    """Where a file tool may write: inside the workspace, outside harness-owned folders."""
    target = resolve_in_workspace(root, path)
    check_writable(root, target)
    return target


def check_glob_pattern(pattern: object) -> str:
    """Accept only relative patterns that cannot name a parent directory."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise PathRefused("pattern must be a non-empty string", kind="bad_input")
    if "\x00" in pattern:
        raise PathRefused("pattern contains a NUL character", kind="bad_input")
    if pattern.startswith(("/", "\\", "~")) or Path(pattern).is_absolute():
        raise PathRefused(f"pattern {pattern!r} is absolute; use a workspace-relative pattern")
    parts = PurePosixPath(pattern.replace("\\", "/")).parts
    if ".." in parts:
        raise PathRefused(f"pattern {pattern!r} uses '..'; patterns must stay inside the workspace")
    return pattern


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (after following symlinks) lies inside ``root``; False if unresolvable."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False
