"""Real agent CLIs from the npm registry, installed once per machine for the tests.

Each client is pinned to one version and kept in a cache folder outside the repository
(``CTXLAB_CLIENTS``, else ``~/.cache/ctxlab/clients``), one folder per package and version, so
a test run downloads it once. Installs are serialised across processes by a file lock
(pytest-xdist workers, two CI jobs on one machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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
