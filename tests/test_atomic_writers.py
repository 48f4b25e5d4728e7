"""Every file ctxlab replaces is replaced by its one atomic writer, ``core/archive/atomic.py``.

A writer of its own brings its own temp names (which the sweep does not recognise, or which
overflow ``NAME_MAX``), its own idea of when to fsync, and its own cleanup. So nothing else in
``core/`` or ``tui/`` may rename a file, make a temp file or spell a ``.tmp`` name — except
the few moves in :data:`ALLOWED`, each with its reason. An entry no longer needed fails too,
so the list cannot outlive what it excuses.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WRITER = "core/archive/atomic.py"

ALLOWED: dict[tuple[str, str], str] = {
    ("core/sources/agent/session.py", "os.replace"):
        "an unreadable work log is set aside as NAME.bad: the user's file is moved under a "
        "new name, nothing is written",
    ("core/memory/journal.py", "os.rename"):
        "a finished memory snapshot *folder* is published by a directory rename; why it is "
        "not the file writer's scheme is in the module's docstring",
    ("core/memory/journal.py", "'.tmp' name"):
        "the prefix of a snapshot folder being built (.history/.tmp-…), which snapshots "
        "left by older versions carry too, so its sweep must keep knowing it",
}

_MODULE_CALLS = {
    "os": {"replace", "rename", "renames"},
    "tempfile": {"mkstemp", "NamedTemporaryFile"},
    "shutil": {"move"},
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (prose may well mention ``.tmp`` names)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def writes_of_its_own(source: str) -> list[str]:
    """What in ``source`` renames a file, makes a temp file or names one, one line each."""
    tree = ast.parse(source)
    aliases = {name: name for name in _MODULE_CALLS}  # the local name -> the module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names
                            if a.asname and a.name in _MODULE_CALLS})
    prose = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _MODULE_CALLS:
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name in _MODULE_CALLS[node.module]]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, attr = node.func.value, node.func.attr
            module = aliases.get(owner.id) if isinstance(owner, ast.Name) else None
            if module is not None and attr in _MODULE_CALLS[module]:
                found.append(f"{module}.{attr}")
            elif module is None and attr in ("replace", "rename") and len(node.args) == 1 \
                    and not node.keywords:  # str.replace takes two; dataclasses', keywords
                found.append(f"Path.{attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and ".tmp" in node.value and id(node) not in prose:
            found.append("'.tmp' name")
    return found


def _project_files() -> list[Path]:
    return sorted(p for folder in ("core", "tui") for p in (ROOT / folder).rglob("*.py"))


def test_nothing_but_the_atomic_writer_replaces_files_or_names_temp_files() -> None:
    found = []
    for path in _project_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel != WRITER:
            found += [(rel, what) for what in writes_of_its_own(path.read_text("utf-8"))]
    assert sorted(found) == sorted(ALLOWED), (
        "rename, temp files and temp names belong to core/archive/atomic.py "
        "(open_atomic, atomic_write_text/bytes, rename_finished, sweep_stale_temp); "
        "an exception needs an ALLOWED entry with its reason")


def test_the_check_sees_every_form_of_a_writer_of_its_own() -> None:
    source = '''
"""A docstring may say .tmp."""
import os, tempfile
import shutil as sh
from os import replace
from tempfile import NamedTemporaryFile
from pathlib import Path

def save(path, text):
    os.replace("a", "b")
    os.rename("a", "b")
    fd, tmp = tempfile.mkstemp()
    sh.move("a", "b")
    Path("a").rename("b")
    Path("a").replace(path)
    name = f".{path}.tmp"
    return text.replace("x", "y"), Path(path).with_suffix(".md")
'''
    assert sorted(writes_of_its_own(source)) == sorted([
        "os.replace", "tempfile.NamedTemporaryFile", "os.replace", "os.rename",
        "tempfile.mkstemp", "shutil.move", "Path.rename", "Path.replace", "'.tmp' name"])


def test_the_writer_itself_is_what_the_check_would_catch() -> None:
    """The scan reads the real files: the writer's own rename is found where it is."""
    assert "os.replace" in writes_of_its_own((ROOT / WRITER).read_text("utf-8"))
