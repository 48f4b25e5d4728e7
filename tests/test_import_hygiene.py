"""Import hygiene: core never imports Textual, no cycles, the app takes little from core."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def test_no_core_module_imports_textual_statically():
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            ui = [n for n in names if n.split(".")[0] in ("textual", "tui")]
            if ui:
                offenders.append(str(path.relative_to(CORE.parent)))
    assert offenders == []


def test_importing_every_core_module_loads_no_textual():
    modules = sorted(
        ".".join(p.relative_to(CORE.parent).with_suffix("").parts)
        for p in CORE.rglob("*.py")
        if p.name != "__main__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m.removesuffix('.__init__'))\n"
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=CORE.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _runtime_tree(path: Path) -> ast.Module:
    """The file's syntax tree without its TYPE_CHECKING blocks (imports for the checker only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            node.body = []
    return tree


def _import_graph(roots: list[Path]) -> dict[str, set[str]]:
    """module → the project modules it imports (at any level; TYPE_CHECKING blocks aside)."""
    files = {}
    for root in roots:
        for path in root.rglob("*.py"):
            name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        tree = _runtime_tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for target in names:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def test_core_and_tui_have_no_import_cycles():
    """One concept per module, in a straight line: no module needs one that needs it."""
    graph = _import_graph([CORE, CORE.parent / "tui"])
    state: dict[str, int] = {}  # 1: on the path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


# What the Textual app (tui/ outside tui/cli/) takes from core, and why. The app draws the
# events of a source and calls its controls; everything else it knows of the engine is here.
APP_IMPORTS = {
    "core.events": "the events it draws, and the vocabularies their fields use",
    "core.sources": "the source base: its controls and capabilities",
    "core.sources.agent.session": "ctxlab's own session, which the workbench opens and restarts",
    "core.config": "the thresholds and break switches a presenter edits",
    "core.usage": "a call's tokens, as the events read them",
    "core.pricing": "what those tokens cost, for the cache line",
    "core.scenarios": "the bundled scenarios it offers",
    "core.memory": "memory editing: the store a person edits by hand",
    "core.compact.breakdown": "pointer rendering: the shapes compaction leaves, and the categories",
    "core.compact.stages": "the stage table: what each stage writes and reads",
    "core.compare": "the compare lab, which runs the strategies",
    "core.archive.atomic": "a stage export, written like every other file",
    "core.views": "the figures its views draw, folded per request (the whole package is theirs)",
    "core.whatif": "what if: a recorded session under other strategies, its figures and colours",
}
# Packages the app may take any module of: they exist to be drawn.
APP_PACKAGES = ("core.views", "core.whatif")


def _as_named(module: str) -> str:
    """A module as :data:`APP_IMPORTS` names it: a module of an app package by its package."""
    return next((p for p in APP_PACKAGES if module.startswith(f"{p}.")), module)


def _core_imports(files: list[Path]) -> set[str]:
    """The core modules these files import (at any level; TYPE_CHECKING blocks aside)."""
    used: set[str] = set()
    for path in files:
        for node in ast.walk(_runtime_tree(path)):
            if isinstance(node, ast.Import):
                used |= {a.name for a in node.names if a.name.split(".")[0] == "core"}
            elif isinstance(node, ast.ImportFrom) and node.module == "core":
                used |= {f"core.{a.name}" for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[0] == "core":
                used.add(node.module)
    return used


def test_the_textual_app_takes_from_core_only_what_this_test_names():
    tui = CORE.parent / "tui"
    app = [p for p in tui.rglob("*.py") if "cli" not in p.relative_to(tui).parts]
    used = {_as_named(module) for module in _core_imports(app)}
    assert sorted(used - set(APP_IMPORTS)) == []
    assert sorted(set(APP_IMPORTS) - used) == []  # the list says what is, not what was
    assert len(APP_IMPORTS) <= 14


def test_core_keeps_at_most_ten_loose_modules_beside_its_packages():
    loose = sorted(p.name for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 10, loose
