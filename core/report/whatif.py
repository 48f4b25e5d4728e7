"""The report's "What if" section: a recorded session under every context strategy.

It shows one :class:`~core.whatif.model.WhatIf` (``ctxlab compare --session``'s result):
the table (the workbench's columns, :mod:`core.whatif.columns`, so the same figures in the
same form), the note that the trajectory is the recorded one, each strategy's lesson, and
one SVG with every strategy's fullness line in the workbench's colours
(:mod:`core.whatif.palette`) and the model's window.

A long session has thousands of requests and seven lines of them would weigh far more than
the rest of the section, so each line is drawn from at most :data:`POINTS` points: the
requests are split into that many equal runs and each run is drawn at its highest request
(a peak is never smoothed away). The table's figures are exact; the page says when a line
is thinned.
"""

from __future__ import annotations

from html import escape
from itertools import pairwise

from core.report.model import Report
from core.report.svg import Frame, y_scale
from core.whatif.columns import RUN_COLUMNS, cell
from core.whatif.model import RequestCost, StrategyRun, WhatIf
from core.whatif.palette import WINDOW_COLOUR, colour_of

POINTS = 100  # points per line at most: about one every 9 px of the plot's width


def peak_points(requests: tuple[RequestCost, ...],
                points: int = POINTS) -> list[tuple[int, int]]:
    """``requests`` as at most ``points`` (index, tokens) pairs: each the highest request of
    an equal run of them, kept at its own index so it is drawn where it happened."""
    pairs = [(r.index, r.tokens) for r in requests]
    if len(pairs) <= points:
        return pairs
    bounds = [len(pairs) * k // points for k in range(points + 1)]
    return [max(pairs[a:b], key=lambda pair: pair[1]) for a, b in pairwise(bounds)]


def compare_strategies(report: Report, strategies: tuple[str, ...] | None = None) -> None:
    """Run ``strategies`` (None: all) over the session the report replayed, and keep the
    result for the section; a source that replayed no recording (a scenario, an event log)
    gets no section and nothing is said."""
    recording = report.collected.recording
    if recording is None:
        return
    from core.whatif.run import compare_session
    from core.whatif.strategies import WhatIfOptions

    options = WhatIfOptions() if strategies is None else WhatIfOptions(strategies=strategies)
    report.whatif = compare_session(recording, options)


def whatif_svg(whatif: WhatIf) -> str:
    """Every strategy's tokens per request on one scale, with the model's window."""
    runs = [run for run in whatif.strategies if run.requests]
    if not runs:
        return '<p class="empty">No strategy produced a request: nothing to draw.</p>'
    lines = [(run, peak_points(run.requests)) for run in runs]
    # the session's requests, not the longest line: a short (failed) line keeps its place
    last = max(whatif.requests, *(index for _, points in lines for index, _ in points))
    window = whatif.window_tokens
    frame = Frame(last, y_scale([*(max(t for _, t in p) for _, p in lines), window or 0]))
    parts = frame.open("whatif", "context tokens per request, per strategy", 1, last)
    if window:
        parts += frame.flat("model window", window)
    for position, (run, points) in enumerate(lines):
        drawn = " ".join(f"{frame.x(index - 1):.0f},{frame.y(tokens):.0f}"
                         for index, tokens in points)
        parts.append(f'<polyline class="series" data-strategy="{escape(run.name)}" '
                     f'data-requests="{len(run.requests)}" data-points="{len(points)}" '
                     f'stroke="{colour_of(run.name, position)}" points="{drawn}"><title>'
                     f"{escape(run.name)}: tokens per request</title></polyline>")
    parts.append("</svg>")
    return "".join(parts)


def _cells(*cells: str, head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{escape(c)}</{tag}>" for c in cells) + "</tr>"


def _row(run: StrategyRun) -> str:
    name = f"{run.name} ✖" if run.error else run.name
    return _cells(name, *(cell(column, run) for column in RUN_COLUMNS))


def _legend(whatif: WhatIf) -> str:
    keys = "".join(f'<span class="key" style="border-color:{colour_of(run.name, n)}">'
                   f"{escape(run.name)}</span>"
                   for n, run in enumerate(r for r in whatif.strategies if r.requests))
    window = (f' · <span class="key" style="border-color:{WINDOW_COLOUR}">dashed: the '
              f"model's window</span>" if whatif.window_tokens else "")
    thinned = (f" · lines of more than {POINTS} requests are drawn at the highest request of "
               f"each 1/{POINTS} of its requests, at that request's place"
               if whatif.requests > POINTS else "")
    return f'<p class="legend">tokens per request: {keys}{window}{thinned}</p>'


def _lessons(whatif: WhatIf) -> str:
    items = []
    for run in whatif.strategies:
        text = f"error: {run.error}" if run.error else run.lesson or run.description
        css = ' class="error"' if run.error else ""
        items.append(f"<li{css}><b>{escape(run.name)}</b>: {escape(text)}</li>")
    return f'<ul class="lessons">{"".join(items)}</ul>'


def whatif_section(whatif: WhatIf) -> str:
    """The whole section."""
    price = (f"costs at {escape(whatif.price_model)}'s prices" if whatif.price_model
             else "no price known for this model: no cost")
    facts = (f"{whatif.requests:,} requests · {whatif.chars_per_token:.2f} chars per token "
             f"({escape(whatif.ratio_source)}) · {whatif.overhead_tokens:,} tokens of fixed "
             f"overhead per request · {price}")
    head = _cells("strategy", *(column.title for column in RUN_COLUMNS), head=True)
    table = (f'<table class="whatif">{head}'
             f'{"".join(_row(run) for run in whatif.strategies)}</table>')
    return (f'<section id="whatif"><h2>What if</h2><p class="note">{escape(whatif.note)}</p>'
            f"<p>{facts}</p>{table}<h3>What this session teaches</h3>{_lessons(whatif)}"
            f"{_legend(whatif)}{whatif_svg(whatif)}</section>")
