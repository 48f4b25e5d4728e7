"""How a run ended, read from its events: the one verdict every front end gives.

``ctxlab run --headless`` and the workbench used to decide apart — the first from
``run_end.ok`` and the last error, the second from the mere arrival of ``run_end`` — so a
run the API refused with HTTP 400 failed on the command line and "finished" on screen.
Both now feed their events to a :class:`RunOutcome` and ask it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.events.base import Event
from core.events.run import Error, RunEnd, RunStart

DID_NOT_COMPLETE = "the run did not complete"


@dataclass
class RunOutcome:
    """The last error and the ``run_end`` of the run seen so far (a ``run_start`` begins
    a new one)."""

    ended: bool = False
    ok: bool = False
    error: str | None = None
    error_kind: str | None = None

    def see(self, event: Event) -> None:
        """Take one event of the run's stream (any event: the others are ignored)."""
        if isinstance(event, RunStart):
            self.ended, self.ok, self.error, self.error_kind = False, False, None, None
        elif isinstance(event, Error):
            self.error, self.error_kind = event.message, event.kind
        elif isinstance(event, RunEnd):
            self.ended, self.ok = True, event.ok

    def failure(self) -> str | None:
        """None when the run ended well; otherwise why not, in the words of its last error
        (a run that never said ``run_end`` did not complete either)."""
        if self.ended and self.ok:
            return None
        return self.error or DID_NOT_COMPLETE
