"""Reading the folder: the cached scan that validates every file, and ``MEMORY.md``.

``MEMORY.md`` is never hand-maintained: it is rendered from the valid records, one line
each, ``- [name](file) - description``. Rebuilding happens after every write and on every
hand edit the watcher sees, so it must not re-read thousands of unchanged files: the
:class:`ScanCache` keeps each parsed file under its ``(mtime_ns, size, inode, ctime_ns)``
and only re-reads files whose key changed. A directory listing plus one ``lstat`` per file
is all an unchanged store costs.

:func:`load_entry` reads one file defensively — no symlink out of the store, no FIFO or
device (also one swapped in after the listing), no file over 1 MB, no binary — and turns
it into a record or an invalid file with a reason; people edit these files, so nothing in
one can hang a scan.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.memory.record import (  # the format; this module only reads and indexes it
    INDEX_NAME,
    MAX_RECORD_BYTES,
    Entry,
    FrontmatterError,
    InvalidFile,
    Record,
    record_from_text,
)
from core.untrusted import UntrustedFileError, read_limited

StatKey = tuple[int, int, int, int]
Loader = Callable[[Path, str, os.stat_result], "Entry | None"]


def collapse(text: str) -> str:
    """Whitespace runs → one space, so every index/catalog entry is one line."""
    return " ".join(text.split())


def index_line(record: Record) -> str:
    return f"- [{collapse(record.name)}]({record.file}) - {collapse(record.description)}"


def render_index(records: Iterable[Record]) -> str:
    """The whole ``MEMORY.md`` text: one line per record, trailing newline, empty if none."""
    lines = [index_line(r) for r in records]
    return "\n".join(lines) + ("\n" if lines else "")


_LINE_FILE = re.compile(r"\]\(([^()/\\]+\.md)\) - ")


def index_changes(old: str | None, new: str) -> tuple[str, ...]:
    """Files whose index line differs between two ``MEMORY.md`` texts.

    Used when this process has no earlier scan to compare with (a fresh ``reindex``): the
    old index file is the best record of what was indexed before. A line that names no
    file (a hand-mangled index) is reported as ``MEMORY.md``.
    """
    before = set((old or "").splitlines())
    after = set(new.splitlines())
    files = set()
    for line in before ^ after:
        match = _LINE_FILE.search(line)
        files.add(match.group(1) if match else INDEX_NAME)
    return tuple(sorted(files))


def is_candidate(name: str) -> bool:
    """Files that are (or claim to be) records: ``*.md``, not hidden, not the index.

    Editor noise (``.foo.md.swp``, ``foo.md~``, ``4913``, ``.#foo.md``) and ctxlab's own
    temp files are all excluded by these two rules.
    """
    return name.endswith(".md") and not name.startswith(".") and name != INDEX_NAME


def load_entry(root: Path, file: str, st: os.stat_result | None = None) -> Entry | None:
    """Read and validate one file; None if it vanished. Never modifies anything.

    ``st`` is the file's ``lstat`` when the caller already has it (a directory scan).
    """
    path = os.path.join(root, file)
    try:
        if file.casefold() == INDEX_NAME.casefold():
            return InvalidFile(file, f"'{file}' is reserved: {INDEX_NAME} is the derived index")
        st = st or os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            try:
                target = Path(path).resolve(strict=True)
            except (OSError, RuntimeError):
                return InvalidFile(file, "broken symlink")
            if not target.is_relative_to(root.resolve()):
                return InvalidFile(file, "symlink pointing outside the store")
            st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return InvalidFile(file, "not a regular file")
        if st.st_size > MAX_RECORD_BYTES:
            return InvalidFile(file, f"larger than 1 MB ({st.st_size} bytes)")
        # The checks above used a stat taken earlier (the listing's): the name may be a
        # FIFO, a device or a growing file by now. read_limited opens without blocking,
        # checks the open file and stops one byte past the cap, so none of them can hang
        # the scan or fill memory.
        data = read_limited(path, MAX_RECORD_BYTES, label=file)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return InvalidFile(file, f"unreadable: {exc.strerror or exc}")
    except UntrustedFileError as exc:
        if not os.path.lexists(path):
            return None  # vanished between the listing and the read
        reason = str(exc).removeprefix(f"{file}: ")
        if "larger than" in reason:
            reason = f"larger than 1 MB (over {MAX_RECORD_BYTES} bytes)"
        return InvalidFile(file, reason)
    if b"\x00" in data:
        return InvalidFile(file, "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return InvalidFile(file, "not UTF-8 text")
    try:
        return record_from_text(file, text)
    except FrontmatterError as exc:
        return InvalidFile(file, str(exc))


@dataclass(frozen=True)
class Scan:
    """One consistent view of the store: valid records, invalid files, and their stat keys."""

    records: tuple[Record, ...] = ()
    invalid: tuple = ()  # tuple[InvalidFile, ...]
    keys: dict[str, StatKey] = field(default_factory=dict)
    reads: int = 0  # files actually (re-)read for this scan
    aliases: dict[str, str] = field(default_factory=dict)  # other name -> the record's file

    def names_of(self, file: str) -> tuple[str, ...]:
        """The other names (links, hard links) of the record in ``file``."""
        return tuple(sorted(a for a, of in self.aliases.items() if of == file))

    def diff(self, before: dict[str, StatKey] | None) -> tuple[str, ...]:
        """Files added, removed or changed since ``before`` (all of them when it is None)."""
        if before is None:
            return tuple(sorted(self.keys))
        names = set(before) | set(self.keys)
        return tuple(sorted(n for n in names if before.get(n) != self.keys.get(n)))


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


class ScanCache:
    """Parses each record file once per version; thread-safe."""

    def __init__(self, loader: Loader = load_entry) -> None:
        self._load = loader
        self._entries: dict[str, tuple[StatKey, Entry]] = {}
        self._lock = threading.Lock()
        self.total_reads = 0  # files parsed since creation (benchmarks and tests read it)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def scan(self, root: Path) -> Scan:
        with self._lock:
            try:
                listing = sorted(
                    (e.name, e) for e in os.scandir(root) if is_candidate(e.name)
                )
            except (FileNotFoundError, NotADirectoryError):
                self._entries.clear()
                return Scan()
            keys: dict[str, StatKey] = {}
            fresh: dict[str, tuple[StatKey, Entry]] = {}
            identities: dict[str, tuple[tuple[int, int], bool]] = {}
            reads = 0
            for name, entry in listing:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = stat_key(st)
                cached = self._entries.get(name)
                # A symlink's own stat says nothing about its target: never cache those.
                if cached is not None and cached[0] == key and not stat.S_ISLNK(st.st_mode):
                    parsed = cached[1]
                else:
                    loaded = self._load(root, name, st)
                    reads += 1
                    if loaded is None:  # vanished between listing and reading
                        continue
                    parsed = loaded
                keys[name] = key
                fresh[name] = (key, parsed)
                if isinstance(parsed, Record):
                    identity = _identity(entry, st)
                    if identity is not None:
                        identities[name] = (identity, stat.S_ISLNK(st.st_mode))
            self._entries = fresh
            self.total_reads += reads
            records, aliases = one_name_per_file(identities, fresh)
            invalid = tuple(e for _, e in fresh.values() if not isinstance(e, Record))
            return Scan(records, invalid, keys, reads, aliases)


def _identity(entry: os.DirEntry, st: os.stat_result) -> tuple[int, int] | None:
    """The file a name stands for: its own device and inode, or its target's for a link."""
    if stat.S_ISLNK(st.st_mode):
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError:
            return None
    return (st.st_dev, st.st_ino)


def one_name_per_file(names: dict[str, tuple[tuple[int, int], bool]],
                      entries: dict[str, tuple[StatKey, Entry]],
                      ) -> tuple[tuple[Record, ...], dict[str, str]]:
    """The records, each file once, and every other name of a record's file.

    ``names`` gives each record's file identity (device and inode, a link's target's) and
    whether the name is a link. A link to ``fact0.md`` (or a hard link) reads as an equal
    record; counted twice, consolidation would keep one name and remove the other, and
    when the kept name was the link the fact was left with no file. So a file is one
    record, under a name that is not a link if it has one (the first such name otherwise);
    its other names are aliases, which consolidation removes only along with the record.
    """
    by_file: dict[tuple[int, int], list[tuple[bool, str]]] = {}
    for name, (identity, link) in names.items():
        by_file.setdefault(identity, []).append((link, name))
    aliases: dict[str, str] = {}
    for group in by_file.values():
        (_, canonical), *others = sorted(group)
        aliases.update((name, canonical) for _, name in others)
    return tuple(e for n, (_, e) in entries.items()
                 if isinstance(e, Record) and n not in aliases), aliases
