"""Real agent CLIs from the npm registry, installed once per machine for the tests.

Each client is pinned to one version and kept in a cache folder outside the repository
(``CTXLAB_CLIENTS``, else ``~/.cache/ctxlab/clients``), one folder per package and version, so
a test run downloads it once. Installs are serialised across processes by a file lock
(pytest-xdist workers, two CI jobs on one machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock


class Unavailable(RuntimeError):
    """The CLI cannot be installed here (no npm, or the registry cannot be reached)."""


def clients_dir() -> Path:
    configured = os.environ.get("CTXLAB_CLIENTS")
    return Path(configured) if configured else Path.home() / ".cache" / "ctxlab" / "clients"


def installed(package: str, version: str, folder_name: str, binary_name: str) -> Path:
    """The binary of ``package@version``, installed on first use."""
    folder = clients_dir() / f"{folder_name}-{version}"
    binary = folder / "node_modules" / ".bin" / binary_name
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is not on PATH, so {package} cannot be installed")
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not binary.exists():
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                 "--loglevel", "error", f"{package}@{version}"],
                capture_output=True, text=True, timeout=600,
            )
            if done.returncode != 0 or not binary.exists():
                raise Unavailable(f"npm install {package}@{version} failed: "
                                  f"{done.stderr.strip()[-500:]}")
    return binary


@dataclass
class CliRun:
    """One run of a real CLI in its print mode: what it was asked (``args``), how it ended,
    the JSON lines it printed, its stderr and its wall time."""

    args: tuple[str, ...]
    returncode: int
    lines: list[dict[str, Any]]
    stderr: str
    seconds: float

    def first(self, key: str) -> str:
        """The first value of ``key`` in the printed lines (a session or thread id)."""
        return str(next(line[key] for line in self.lines if key in line))


R = TypeVar("R", bound=CliRun)


def run_cli(command: list[str], args: tuple[str, ...], work: Path, env: dict[str, str],
            kind: type[R]) -> R:
    """Run ``command`` (the CLI and its arguments, ``args`` among them) in ``work``, with no
    input (Codex reads stdin when it is not a terminal), and read its JSON lines into a
    ``kind`` (the client's run, which knows its ids)."""
    started = time.monotonic()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return kind(args, done.returncode, lines, done.stderr, time.monotonic() - started)
