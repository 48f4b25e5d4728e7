"""Going back in a scripted scenario: the run starts again and plays to the request asked for.

A scripted scenario is deterministic: the same workspace, the same script and the same limits
give the same events. So a seek back (:meth:`core.sources.Source.seek`) needs no store of
what was shown: the scenario starts again from a freshly generated workspace, and the seek's
target lets every step through at once until it is reached, where the run holds, paused —
the gate and its target are the replay's (:mod:`core.sources.controls`), and the ``rewind``
event tells the front ends to forget what they drew, as after a replay's seek.

Only a workspace the run generated itself can be generated again: a scenario played in a
directory that already held files (a person's project) does not offer going back, since
starting again would mean wiping what was there.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from core.sources.controls import Controls


class StartAgain(BaseException):
    """A seek asked for a request already played: the scenario starts over.

    A BaseException, like a cancel, so no ``except Exception`` on the way out of a turn
    mistakes it for a failure of the turn."""


class RequestGate:
    """The agent's gate with a position: main model requests sent so far.

    The agent awaits :meth:`wait` before each main call; a seek ahead lets calls through at
    once, a seek behind raises :class:`StartAgain`. ``on_pass`` runs after each pass (the
    session re-reads the word pace: none on the way to a target)."""

    def __init__(self, controls: Controls, on_pass: Callable[[], None] | None = None) -> None:
        self.controls = controls
        self.requests = 0
        self.on_pass = on_pass

    async def wait(self) -> None:
        await self.controls.wait(self.requests)
        if self.controls.behind(self.requests):
            raise StartAgain
        self.requests += 1
        if self.on_pass is not None:
            self.on_pass()


def generated_here(workspace: Path) -> bool:
    """The workspace is missing or empty: whatever the run puts there, it made."""
    return not workspace.exists() or not any(workspace.iterdir())


def empty_workspace(workspace: Path) -> None:
    """Remove what the run generated and did in ``workspace``, keeping the directory (a
    front end shows that path). Links are removed, never followed."""
    for entry in list(workspace.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
