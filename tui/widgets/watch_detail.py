"""The selected watched request: its category breakdown, usage, changes and client stages.

The breakdown is the request's own (``watch_request.breakdown``), in the categories of the
live Context meter: the messages by what they carry, which add up to the request's chars
(each row's share is of those), then the system prompt and tool definitions sent besides.
Bars are scaled to the largest row, so a learner sees at a glance what a client spends its
context on.
"""

from __future__ import annotations

from rich.cells import set_cell_size
from textual.widgets import Static

from core.compact.breakdown import MESSAGE_CATEGORIES, SENT_EVERY_CALL
from core.events import Stage, WatchRequest, WatchResponse
from tui.i18n import t
from tui.managers import by_label

BAR = 12  # a row fits the detail pane's width unwrapped (50 cells)
LABEL_CELLS = 20  # a CJK label takes two cells a character


def breakdown_lines(request: WatchRequest) -> list[str]:
    """One line per category the request has: messages first (with their share of the
    request's chars), then what was sent besides them."""
    parts = request.breakdown
    widest = max((int(v) for v in parts.values()), default=0) or 1

    def row(name: str, share: str) -> str:
        chars = int(parts.get(name, 0))
        filled = round(chars / widest * BAR)
        return (f"  {set_cell_size(t(f'cat.{name}'), LABEL_CELLS)} {'█' * filled}"
                f"{'░' * (BAR - filled)} {chars:>9,} {share}")

    whole = request.chars or 1
    lines = [t("breakdown.messages", n=request.chars)]
    lines += [row(name, f"{int(parts.get(name, 0)) / whole:>4.0%}")
              for name in MESSAGE_CATEGORIES]
    besides = [name for name in SENT_EVERY_CALL if name in parts]
    if besides:
        lines += [t("breakdown.besides"), *(row(name, "") for name in besides)]
    return lines


def stage_lines(stage: Stage) -> list[str]:
    lines = [f"✂ {stage.stage} ({by_label(stage.by)}): {stage.before_chars:,} → "
             f"{stage.after_chars:,} chars, {stage.before_messages} → "
             f"{stage.after_messages} messages"]
    for entry in stage.ledger:
        if "placeholder" in entry:
            lines.append(f"   {entry['tool_use_id']}: {entry['chars']:,} chars → "
                         f"{entry['placeholder']!r}")
        elif "summary" in entry:
            lines.append(f"   summary: {entry['summary'][:70]!r}")
        else:
            lines.append(f"   gone: message {entry.get('message_index')} "
                         f"({entry.get('role')}, {entry.get('chars', 0):,} chars) "
                         f"{str(entry.get('preview', ''))[:50]!r}")
    return lines


def detail_text(request: WatchRequest, response: WatchResponse | None,
                stages: list[Stage]) -> str:
    lines = [f"#{request.id}  {request.method} {request.path}  {request.purpose}  "
             f"{request.model or ''}",
             f"conversation {request.conversation or '—'}: +{request.appended} appended, "
             f"{request.removed} removed, {request.rewritten} rewritten",
             f"{request.messages} messages, {request.chars:,} chars, "
             f"~{request.est_tokens:,} tokens estimated, {request.body_bytes:,} bytes", ""]
    if request.breakdown:
        lines += [*breakdown_lines(request), ""]
    if response is None:
        lines.append("waiting for the answer…")
    else:
        usage = response.usage or {}
        if usage:
            lines.append("usage: " + ", ".join(f"{k} {v:,}" for k, v in usage.items()
                                                if isinstance(v, int)))
        lines.append(f"status {response.status}, stop {response.stop_reason or '—'}, "
                     f"{response.duration_ms:,.0f} ms (first byte "
                     f"{'—' if response.ttfb_ms is None else f'{response.ttfb_ms:,.0f} ms'})")
        if response.error:
            lines.append(f"! {response.error}")
    for stage in stages:
        lines += ["", *stage_lines(stage)]
    return "\n".join(lines)


class RequestDetail(Static):
    """Text of the selected request; ``show()`` replaces it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("no request yet: point a client at the proxy", id=id, markup=False)
        self.border_title = "Request"

    def show(self, request: WatchRequest, response: WatchResponse | None,
             stages: list[Stage]) -> None:
        self.update(detail_text(request, response, stages))
