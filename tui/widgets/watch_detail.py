"""The selected watched request: its category breakdown, usage, changes and client stages.

The breakdown bars are scaled to everything the request sent (system prompt, tool
definitions and messages), the same categories as the live Context meter's, so a learner can
see at a glance what a client spends its context on.
"""

from __future__ import annotations

from textual.widgets import Static

from core.events import Stage, WatchRequest, WatchResponse
from core.sources.watch.analysis import CATEGORIES
from tui.managers import by_label

BAR = 30


def breakdown_lines(categories: dict[str, int]) -> list[str]:
    total = sum(categories.get(name, 0) for name in CATEGORIES) or 1
    lines = []
    for name in CATEGORIES:
        chars = categories.get(name, 0)
        filled = round(chars / total * BAR)
        lines.append(f"{name:<17} {'█' * filled}{'░' * (BAR - filled)} {chars:>10,} "
                     f"{chars / total:>4.0%}")
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
    if request.categories:
        lines += [*breakdown_lines(request.categories), ""]
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
