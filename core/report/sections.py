"""The report's sections, each a small function of one :class:`~core.report.model.Report`.

A section returns its HTML, with everything from the source escaped
(:func:`~core.report.quoting.esc`); the page (:mod:`core.report.page`) puts them in order.
The figures are the events' own, read from the fold (:mod:`core.views.requests`): a
request's tokens are the API's count where an answer said, else the source's estimate, and
say which; a breakdown's tokens are its chars at the session's ratio, marked ``≈``.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from core.compact.summary_facts import is_summary_message
from core.report.caps import TOTAL_CHARS, Budget
from core.report.model import Report, StageRow
from core.report.quoting import esc, message_html, quote_html
from core.report.svg import COLOURS, timeline_svg
from core.report.turns import Differ, TurnDiff
from core.views.requests import RequestPoint, Side
from core.views.window import Window

LEDGER_ROWS = 200  # a stage's ledger rows shown; the rest are counted
SIDE_NAMES: dict[str, str] = {"ctxlab": "ctxlab", "original": "the recorded agent",
                              "watched": "the watched client"}


def _row(*cells: object, head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{esc(c)}</{tag}>" for c in cells) + "</tr>"


def header(report: Report) -> str:
    """Source, agent, model, requests and compactions per side, the ratio, any error."""
    start, replay = report.run_start, report.replay_start
    agent = replay.agent if replay is not None else "ctxlab"
    model = (start.model if start is not None else None) or "unknown"
    rows = [_row("source", f"{report.collected.source} ({report.collected.kind})"),
            _row("agent", agent), _row("model", model)]
    for side in report.log.sides():
        rows.append(_row(f"requests ({SIDE_NAMES[side]})", f"{len(report.log.side(side)):,}"))
    for side in report.log.sides():
        stages = report.stages_of(side)
        rows.append(_row(f"compaction stages ({SIDE_NAMES[side]})", f"{len(stages):,}"))
    ratio = (f"{report.chars_per_token:.2f} chars per token "
             f"({replay.ratio_source if replay is not None else 'estimate'})")
    rows.append(_row("ratio", ratio))
    errors = "".join(f'<p class="error">{esc(e.kind)}: {esc(e.message)}</p>'
                     for e in report.errors)
    return (f'<header><h1>ctxlab report</h1><table class="facts">{"".join(rows)}</table>'
            f"{errors}</header>")


def timeline(report: Report) -> str:
    """The fullness timeline (the Timeline tab's, :mod:`core.views.timeline`) and its legend."""
    drawn = report.timeline()
    legend = "".join(f'<span class="key" style="border-color:{COLOURS[s.side]}">'
                     f"{esc(SIDE_NAMES[s.side])}</span>" for s in drawn.series)
    start = report.replay_start
    window = [("model window", start.context_limit_tokens)] \
        if start is not None and start.context_limit_tokens else []
    return (f'<section id="timeline"><h2>Fullness timeline</h2>'
            f'<p class="legend">tokens per request: {legend} · dashed: where each side '
            f"compacts, and the model's window · vertical: a compaction before that request · "
            f"shaded: cache reads</p>{timeline_svg(drawn, window)}</section>")


def requests(report: Report) -> str:
    """Every request of every side, each a ``<details>``: figures, breakdown, turn diff."""
    parts = ['<section id="requests"><h2>Requests</h2><p class="legend">Each request: its '
             "tokens, chars and messages; <code>+a \u2212r ~c</code>: the messages appended, "
             "removed and rewritten since the side's previous request.</p>"]
    differ = Differ()
    for side in report.log.sides():
        points = report.log.side(side)
        parts.append(f"<h3>{esc(SIDE_NAMES[side])}: {len(points):,} requests</h3>")
        if points and points[0].sent is None:
            parts.append('<p class="empty">No turn diff for these requests: the source kept '
                         "no messages for them (an event log).</p>")
        prev: RequestPoint | None = None
        for point in points:
            parts.append(_request(report, side, point, differ.diff(prev, point)))
            prev = point
    parts.append("</section>")
    return "".join(parts)


def _request(report: Report, side: Side, point: RequestPoint, diff: TurnDiff | None) -> str:
    counted = "counted" if point.counted else "estimated"
    window = report.window(point)
    tokens = window.tokens if window is not None else point.context_tokens
    cache = f", {point.cache_read:,} read from cache" if point.cache_read else ""
    staged = (f' <span class="staged">after {len(point.stages)} compaction stage'
              f'{"" if len(point.stages) == 1 else "s"}</span>' if point.stages else "")
    turn = f' <span class="diff">{diff.label}</span>' if diff is not None else ""
    summary = (f"<summary>{esc(side)} request {point.index}: {tokens:,} tokens "
               f"({counted}{cache}) · {point.chars:,} chars · {point.messages:,} messages"
               f"{turn}{staged}</summary>")
    body = [_breakdown(window), _diff(report, side, point, diff)]
    return (f'<details class="item request" id="request-{side}-{point.index}">{summary}'
            f'{"".join(body)}</details>')


def _breakdown(window: Window | None) -> str:
    """One line per request (thousands of requests: a table each would weigh megabytes):
    ``chars / tokens: text 6,334/1,584 · …`` — the Window tab's split, which adds up to
    the request's tokens (a part the source does not record has no chars: ``—``)."""
    cells = [f"<b>{esc(part.category)}</b> "
             f"{'—' if part.chars is None else f'{part.chars:,}'}/{part.tokens:,}"
             for part in (window.parts if window is not None else ()) if part.tokens
             or part.chars]
    if not cells:
        return '<p class="empty">No breakdown for this request.</p>'
    return f'<p class="breakdown">chars / tokens: {" · ".join(cells)}</p>'


def _diff(report: Report, side: Side, point: RequestPoint, diff: TurnDiff | None) -> str:
    if diff is None:
        return ""  # said once for the side
    where = f"message {{n}} of {side} request {point.index} in the source"
    parts = ['<div class="turn">']
    for change in diff.changes:
        parts.append(f'<p class="change">{esc(change.stage)}: {change.before_messages} → '
                     f"{change.after_messages} messages</p>"
                     + _ledger(change.ledger, report.budget))
    if diff.new and report.budget.spent:
        parts.append(f'<p class="cut">{len(diff.new):,} new messages not quoted: the '
                     f"report quotes {TOTAL_CHARS:,} chars in all; the whole text is in the "
                     "source</p>")
    else:
        for offset, message in enumerate(diff.new):
            number = diff.first_new + offset + 1
            parts.append(message_html(message, report.budget, where.format(n=number)))
    parts.append("</div>")
    return "".join(parts)


def _ledger(ledger: tuple[dict[str, Any], ...], budget: Budget) -> str:
    """The ledger's rows, up to :data:`LEDGER_ROWS` and while the report's allowance
    lasts; the rest counted, and where they are whole."""
    if not ledger:
        return ""
    keys = list(dict.fromkeys(k for entry in ledger[:LEDGER_ROWS] for k in entry))
    rows = [_row(*keys, head=True)]
    for entry in ledger[:LEDGER_ROWS]:
        cells = [_cell(entry.get(k)) for k in keys]
        if not budget.spend(sum(map(len, cells))):
            break
        rows.append(_row(*cells))
    left = len(ledger) - (len(rows) - 1)
    more = (f'<p class="cut">{left:,} ledger entries not shown (all: the stage event in '
            "--json)</p>" if left else "")
    table = f'<table class="ledger">{"".join(rows)}</table>' if len(rows) > 1 else ""
    return table + more


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)[:200]


def stages(report: Report) -> str:
    """Every stage: before and after, its ledger, and the summary it kept."""
    parts = [f'<section id="stages"><h2>Stages ({len(report.stages):,})</h2>']
    if not report.stages:
        parts.append('<p class="empty">No stage: nothing was compacted.</p>')
    parts += [_stage(report, row) for row in report.stages]
    parts.append("</section>")
    return "".join(parts)


def _stage(report: Report, row: StageRow) -> str:
    stage = row.stage
    at = (f"before {SIDE_NAMES[row.side]}'s request {row.request}" if row.request is not None
          else "after the last request")
    rows = [_row("", "before", "after", head=True),
            _row("chars", f"{stage.before_chars:,}", f"{stage.after_chars:,}"),
            _row("messages", f"{stage.before_messages:,}", f"{stage.after_messages:,}")]
    if stage.pre_tokens is not None or stage.post_tokens is not None:
        rows.append(_row("tokens (as the agent reported)", _cell(stage.pre_tokens),
                         _cell(stage.post_tokens)))
    facts = [f"{esc(stage.by)} {esc(stage.stage)} {at}"]
    if stage.trigger:
        facts.append(f"trigger: {esc(stage.trigger)}")
    if stage.files:
        facts.append("files: " + ", ".join(esc(f) for f in stage.files))
    summary = (f"<summary>stage {row.number}: {esc(stage.by)} {esc(stage.stage)} · "
               f"{stage.before_chars:,} → {stage.after_chars:,} chars · "
               f"{stage.before_messages:,} → {stage.after_messages:,} messages</summary>")
    body = (f'<p>{" · ".join(facts)}</p><table class="beforeafter">{"".join(rows)}</table>'
            f"{_ledger(stage.ledger, report.budget)}{kept_summary(report, row)}")
    return (f'<details class="item stage" data-side="{row.side}" id="stage-{row.number}">'
            f"{summary}{body}</details>")


def kept_summary(report: Report, row: StageRow) -> str:
    """The summary a stage kept: the agent's archived file, or ctxlab's summary message."""
    collected, stage = report.collected, row.stage
    for name in stage.files:
        if name in collected.summaries:
            text = collected.summaries[name]
            size = collected.summary_sizes.get(name, len(text))
            quote = report.budget.quote(text)
            where = f"{name} in the replay's folder (kept with ctxlab replay --workdir)"
            cut = (f'<p class="cut">the file holds {size:,} bytes; read up to {len(text):,} '
                   f"chars</p>" if size > len(text.encode()) else "")
            return f'<div class="kept"><h4>Kept summary</h4>{quote_html(quote, where)}{cut}</div>'
    snapshot = stage.snapshot
    if snapshot is not None:
        kept = next((m for m in snapshot.after if is_summary_message(m)), None)
        if kept is not None:
            where = f"stage {row.number}'s kept messages (ctxlab run --session keeps them)"
            return ('<div class="kept"><h4>Kept summary</h4>'
                    f"{quote_html(report.budget.quote(str(kept.get('content', ''))), where)}"
                    "</div>")
    return ""


def system_and_tools(report: Report) -> str:
    """The system prompt's sections (and texts, where the run kept them) and the tools."""
    parts = ['<section id="system"><h2>System prompt and tools</h2>']
    prompts = report.system_prompts
    if not prompts:
        parts.append('<p class="empty">No system prompt event: this source did not say its '
                     "system prompt's sections.</p>")
    else:
        last = prompts[-1]
        changes = sum(1 for a, b in pairwise(prompts)
                      if a.sections != b.sections)
        parts.append(f"<p>Sent {len(prompts):,} times; its sections changed {changes:,} "
                     "times. The last one:</p>")
        rows = [_row("section", "category", "chars", "source", head=True)]
        rows += [_row(s.get("name", ""), s.get("category", ""), _cell(s.get("chars")),
                      s.get("source", "")) for s in last.sections]
        parts.append(f'<table class="sections">{"".join(rows)}</table>')
        for section, text in zip(last.sections, last.texts, strict=False):
            where = "the system prompt as the run built it"
            parts.append(f'<details class="item prompt"><summary>{esc(section.get("name"))}'
                         f"</summary>{quote_html(report.budget.quote(text), where)}</details>")
    parts.append(_tools(report))
    parts.append("</section>")
    return "".join(parts)


def _tools(report: Report) -> str:
    from core.tools import TOOL_SCHEMAS

    parts = []
    agent = report.run_start is not None and report.run_start.provider != "replay"
    if agent:  # ctxlab's own loop: the definitions it sends with every call
        rows = [_row("tool", "description", head=True)]
        rows += [_row(t.get("name", ""), str(t.get("description", ""))[:300])
                 for t in TOOL_SCHEMAS]
        parts.append(f'<h3>Tool definitions</h3><table class="tools">{"".join(rows)}</table>')
    if report.tools_used:
        rows = [_row("tool", "calls", head=True)]
        rows += [_row(name or "?", f"{n:,}") for name, n in report.tools_used.most_common()]
        parts.append(f'<h3>Tools called</h3><table class="tools">{"".join(rows)}</table>')
    return "".join(parts)
