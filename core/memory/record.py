"""A memory record's file format: frontmatter, slugs and the guards on names.

One record is YAML frontmatter (``name``, ``description``, ``type``) between two lines that
are exactly ``---``, a blank line, then the body. Parsing splits on those lines only, so a
``---`` inside a value round-trips; names that are paths are refused, and slugs that
collide are disambiguated rather than overwritten.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

INDEX_NAME = "MEMORY.md"  # the derived index (core.memory.index renders it)
MEMORY_TYPES = ("user", "feedback", "project", "reference")
MAX_RECORD_BYTES = 1_000_000
SLUG_MAX_BYTES = 100
RESERVED_SLUGS = frozenset({"memory"})  # memory.md *is* MEMORY.md on case-insensitive disks

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class MemoryStoreError(ValueError):
    """A refused operation; the message is the one-line reason shown to the user."""


class FrontmatterError(ValueError):
    """A file is not a valid record; the message is the reason ``check`` reports."""


@dataclass(frozen=True)
class Record:
    """One valid memory record. ``file`` is its name inside the store."""

    file: str
    name: str
    description: str
    type: str
    body: str

    def document(self) -> str:
        return render_document(self.name, self.description, self.type, self.body)

    def summary(self) -> dict[str, str]:
        return {"file": self.file, "name": self.name, "type": self.type,
                "description": self.description}


@dataclass(frozen=True)
class InvalidFile:
    """A ``*.md`` file in the store that is not a valid record, and why."""

    file: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "reason": self.reason}


Entry = Record | InvalidFile


# -- document format ------------------------------------------------------------------------


def _dump(meta: dict[str, str], allow_unicode: bool) -> str:
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=allow_unicode).strip()


def _round_trips(frontmatter: str, meta: dict[str, str]) -> bool:
    if any(line.rstrip("\r") == "---" for line in frontmatter.split("\n")):
        return False
    try:
        return yaml.load(frontmatter, Loader=_LOADER) == meta
    except yaml.YAMLError:
        return False


def render_document(name: str, description: str, type_: str, body: str) -> str:
    """The course's layout: ``---``, YAML (name, description, type), ``---``, blank, body.

    Readable Unicode YAML is used when it reads back identically; a few code points
    (NEL, LINE SEPARATOR…) do not survive PyYAML's Unicode output, and then the values are
    written with escapes instead — either way every value round-trips exactly.
    """
    meta = {"name": name, "description": description, "type": type_}
    frontmatter = _dump(meta, allow_unicode=True)
    if not _round_trips(frontmatter, meta):
        frontmatter = _dump(meta, allow_unicode=False)
    return f"---\n{frontmatter}\n---\n\n{body.strip()}\n"


def parse_document(text: str) -> tuple[dict[str, Any], str]:
    """Split on lines that are exactly ``---`` (a ``---`` inside a value is not a fence)."""
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        raise FrontmatterError("no frontmatter (the file must start with a '---' line)")
    closing = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip("\r") == "---"),
                   None)
    if closing is None:
        raise FrontmatterError("frontmatter is not closed by a '---' line")
    try:
        meta = yaml.load("\n".join(lines[1:closing]), Loader=_LOADER)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise FrontmatterError(f"bad YAML in frontmatter: {problem}{where}") from None
    except Exception as exc:  # e.g. RecursionError on absurd nesting
        raise FrontmatterError(f"bad YAML in frontmatter: {type(exc).__name__}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontmatterError("frontmatter is not a YAML mapping")
    return meta, "\n".join(lines[closing + 1:]).strip()


def _field(meta: dict[str, Any], key: str) -> str:
    if key not in meta:
        raise FrontmatterError(f"missing field '{key}'")
    value = meta[key]
    if isinstance(value, bool) or not isinstance(value, str | int | float | date):
        if value is None:
            raise FrontmatterError(f"empty field '{key}'")
        raise FrontmatterError(f"field '{key}' must be text, not {type(value).__name__}")
    text = value if isinstance(value, str) else str(value)
    if not text.strip():
        raise FrontmatterError(f"empty field '{key}'")
    return text


def record_from_text(file: str, text: str) -> Record:
    """Validate a document; raises :class:`FrontmatterError` with the reason."""
    meta, body = parse_document(text)
    name = _field(meta, "name")
    description = _field(meta, "description")
    type_ = _field(meta, "type")
    if type_ not in MEMORY_TYPES:
        raise FrontmatterError(f"unknown type {type_!r} (expected {', '.join(MEMORY_TYPES)})")
    if reason := path_like_reason(name):
        raise FrontmatterError(reason)
    if not body:
        raise FrontmatterError("empty body")
    return Record(file, name, description, type_, body)


# -- names and guards ---------------------------------------------------------------------


def slugify(name: str) -> str:
    """The course's slug: lowercase, ``[^\\w]+`` → ``-``, strip ``-_``, empty → ``memory``.

    Also NFC-normalised and clipped to 100 UTF-8 bytes so it is always a legal file name.
    """
    text = unicodedata.normalize("NFC", name).lower()
    slug = re.sub(r"[^\w]+", "-", text).strip("-_")
    clipped = slug.encode("utf-8")[:SLUG_MAX_BYTES].decode("utf-8", "ignore")
    return clipped.strip("-_") or "memory"


_HOME_OR_DRIVE = re.compile(r"^\s*(?:~(?:[/\\]|\s*$)|[A-Za-z]:[/\\])")
_ROOTED = re.compile(r"^\s*[/\\]\S*[/\\]")  # /etc/passwd, \\server\share
_FILE_PATH = re.compile(r"[/\\][^/\\\s]+\.[A-Za-z0-9]{1,8}\s*$")  # dir/file.ext, /x.md


def path_like_reason(name: str) -> str | None:
    """Why ``name`` reads as a file path (and so is refused), or None.

    Rooted and home paths, drive letters, ``.``/``..`` components and ``dir/file.ext`` are
    paths; a title that merely contains a slash (``TCP/IP setup``, ``CI/CD``,
    ``/compact usage``) is not.
    """
    if "\x00" in name:
        return "name contains a NUL character"
    parts = [p.strip() for p in re.split(r"[/\\]", name)]
    if (_HOME_OR_DRIVE.match(name) or _ROOTED.match(name) or name.strip() in (".", "..")
            or (len(parts) > 1 and any(p in (".", "..") for p in parts))
            or _FILE_PATH.search(name)):
        return f"name {name!r} looks like a file path; a memory name is a title, not a path"
    return None


def check_file_name(file: str) -> None:
    """Refuse anything that is not a bare ``*.md`` record name inside the store."""
    if not isinstance(file, str) or not file:
        raise MemoryStoreError("empty file name")
    if ("/" in file or "\\" in file or "\x00" in file or file in (".", "..")
            or Path(file).name != file):
        raise MemoryStoreError(f"{file!r} is not a bare file name inside the memory folder")
    if file.casefold() == INDEX_NAME.casefold():
        raise MemoryStoreError(f"{INDEX_NAME} is the derived index, not a record")
    if file.startswith(".") or not file.endswith(".md"):
        raise MemoryStoreError(f"{file!r} is not a record file name (records are visible *.md)")


def allocate_file(name: str, taken: set[str]) -> str:
    """A free ``<slug>.md`` for ``name``; ``taken`` holds casefolded names already in use."""
    base = slugify(name)
    if base.casefold() in RESERVED_SLUGS:
        base = f"{base}-record"
    candidate, n = base, 2
    while f"{candidate}.md".casefold() in taken:
        candidate, n = f"{base}-{n}", n + 1
    return f"{candidate}.md"


def validate_fields(name: str, description: str, type_: str, body: str) -> None:
    """The write-side rules (the course's, plus path-like names); raises MemoryStoreError."""
    for label, value in (("name", name), ("description", description), ("body", body),
                         ("type", type_)):
        if not isinstance(value, str):  # never str(None) -> a record named "None"
            raise MemoryStoreError(f"memory {label} must be text, not {type(value).__name__}")
        if not value.strip():
            raise MemoryStoreError(f"memory {label} cannot be empty")
    if type_ not in MEMORY_TYPES:
        expected = ", ".join(MEMORY_TYPES)
        raise MemoryStoreError(f"unknown memory type {type_!r} (expected {expected})")
    if reason := path_like_reason(name):
        raise MemoryStoreError(reason)
    if "\x00" in body:
        raise MemoryStoreError("memory body contains NUL bytes (records are text)")


# -- the store ------------------------------------------------------------------------------
