"""core/ must never import Textual: the UI consumes core's events, never the reverse."""

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
