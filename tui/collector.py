"""Keeping the cyclic garbage collector's full collections out of the workbench's frames.

A full collection walks every container object the process holds — Textual, the widgets,
their styles, every imported module — in the middle of whatever frame allocated the object
that set it off, and such a frame lasts several ordinary ones (measured on the 10 MB bench
of ``bench/bench_tui.py``: docs/PERFORMANCE.md, "Memory and the workbench"). Two standard
remedies together:

* :func:`gc.freeze` once the workbench is built: what exists then lives as long as the app,
  and a frozen object is never walked again (it is still freed by reference counting);
* a higher threshold for the oldest generation: after a freeze CPython counts almost
  nothing as long-lived, so with the default threshold it would run a full collection of
  the run's own objects every ten middle ones, in most runs' worst frame.

Both are undone when the app unmounts (a test process starts many apps).

A replay played at top speed keeps every event it showed (to seek back), so the run's own
long-lived objects grow by the thousand each second, and CPython runs a full collection
whenever they have grown by a quarter since the last: each one walks them all, the longer
the session the longer, until a single collection lasts many frames. While bursts keep
coming, the app calls :meth:`QuietCollector.settle` after each routing: a collection of the
young generations, then a freeze of what survived, so a full collection only ever walks what
came since. What was frozen and then dropped during the stream (History items trimmed, a
previous run's objects) is cyclic garbage no collection can see; so once the stream has been
quiet a while the app calls :meth:`QuietCollector.relax`: everything is thawed, collected in
full once, in that quiet moment rather than mid-stream, and what survives is frozen again.
"""

from __future__ import annotations

import gc

# Full collections are tried every FULL_EVERY middle collections (CPython's default: 10).
FULL_EVERY = 100
RELAX_AFTER = 1.0  # seconds of quiet after a stream before what it froze is thawed


class QuietCollector:
    """Freeze what the app was built from; collect the oldest generation less often.

    The collector is the process's: apps sharing a process (a test run) share one setting,
    made by the first to start and undone by the last to stop."""

    _users = 0
    _saved: tuple[int, int, int] = gc.get_threshold()

    def __init__(self) -> None:
        self.started = False
        self.settled = False  # something was frozen by settle() since the last relax()

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        cls = type(self)
        if cls._users == 0:
            cls._saved = gc.get_threshold()
            gc.freeze()
            young, middle, _ = cls._saved
            gc.set_threshold(young, middle, FULL_EVERY)
        cls._users += 1

    def settle(self) -> None:
        """Collect the young generations and freeze what survives (see the module)."""
        if not self.started:
            return
        gc.collect(1)
        gc.freeze()
        self.settled = True

    def relax(self) -> None:
        """After a stream: thaw what :meth:`settle` froze, collect it once, freeze again."""
        if not self.started or not self.settled:
            return
        self.settled = False
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    def stop(self) -> None:
        if not self.started:
            return
        self.started = False
        cls = type(self)
        cls._users -= 1
        if cls._users == 0:
            gc.set_threshold(*cls._saved)
            gc.unfreeze()
