"""``ctxlab report``: a SOURCE run headless and drawn as one self-contained HTML page.

:func:`make_report` runs or reads the SOURCE (:mod:`core.views.collect`), folds its events
per request (:mod:`core.report.model`, on :mod:`core.views.requests`) and renders the page
(:mod:`core.report.page`), one small function per section (:mod:`core.report.sections`);
:func:`write_report` puts it on disk atomically, never over a file that is not a report
unless asked. No Textual here: the command line is a thin front (``tui/cli/cmd_report.py``).
"""

from __future__ import annotations

from core.report.model import Report, build
from core.report.output import write_report
from core.report.page import render
from core.views.collect import Collected, SourceError, collect


def make_report(source: str) -> str:
    """The HTML page for ``source``; :class:`SourceError` (one line) when there is none."""
    return render(build(collect(source)))


__all__ = ["Collected", "Report", "SourceError", "build", "collect", "make_report", "render",
           "write_report"]
