"""A test that needs an outside program: skipped where the program cannot be had, failed
where CI said it must be there (``CTXLAB_REQUIRE_CLIENTS``, ``CTXLAB_REQUIRE_BROWSER``), so a
broken install never passes as a skip."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest


def require(find: Callable[[], object], unavailable: type[Exception], env: str,
            what: str) -> None:
    """Call ``find``; when it raises ``unavailable``, fail if ``env`` is set, else skip."""
    try:
        find()
    except unavailable as exc:
        if os.environ.get(env):
            pytest.fail(f"{what} is required here: {exc}")
        pytest.skip(str(exc))
