"""The selected watched request: its category breakdown, usage, changes and client stages.

The breakdown is the request's own (``watch_request.breakdown``), in the categories of the
live Context meter: the messages by what they carry, which add up to the request's chars
(each row's share is of those), then the system prompt and tool definitions sent besides.
Bars are scaled to the largest row, so a learner sees at a glance what a client spends its
context on. :func:`changes_content` draws, under the requests, the entries the counts of
what changed count (the turn diff, :mod:`core.views.turn_diff`, the comparison the counts
come from) and the request's largest items.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import set_cell_size
from textual.content import Content
from textual.widgets import Static

from core.compact.breakdown import MESSAGE_CATEGORIES, SENT_EVERY_CALL
from core.events import Stage, WatchRequest, WatchResponse
from core.views.items import Item
from core.views.turn_diff import TurnDiff
from tui.i18n import t
from tui.managers import by_label
from tui.widgets.items_panel import item_label
from tui.widgets.render import short_size
from tui.widgets.turn_diff_panel import block_content, counts_content

ITEMS_SHOWN = 5  # the detail names the largest few; ``i`` lists them all

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
    """A client stage's sizes, then what it did to each message it touched."""
    lines = [t("watch.stage", stage=stage.stage, by=by_label(stage.by),
               chars=t("conv.stage_chars", before=stage.before_chars, after=stage.after_chars),
               messages=t("conv.stage_msgs", before=stage.before_messages,
                          after=stage.after_messages, n=stage.after_messages))]
    for entry in stage.ledger:
        if "placeholder" in entry:
            lines.append(t("watch.placeholder", tool=entry["tool_use_id"], chars=entry["chars"],
                           placeholder=repr(entry["placeholder"])))
        elif "summary" in entry:
            lines.append(t("watch.summary", summary=repr(entry["summary"][:70])))
        else:
            lines.append(t("watch.gone", index=entry.get("message_index"),
                           role=entry.get("role"), chars=entry.get("chars", 0),
                           preview=repr(str(entry.get("preview", ""))[:50])))
    return lines


def _ms(value: float | None) -> str:
    return "—" if value is None else t("watch.ms", ms=value)


def answer_lines(response: WatchResponse) -> list[str]:
    """The answer's usage as the API reported it (its field names kept), status and timing."""
    lines = []
    usage = response.usage or {}
    if usage:
        lines.append(t("watch.usage", usage=", ".join(
            f"{k} {v:,}" for k, v in usage.items() if isinstance(v, int))))
    lines.append(t("watch.status", status=response.status, stop=response.stop_reason or "—",
                   duration=_ms(response.duration_ms), first=_ms(response.ttfb_ms)))
    if response.error:
        lines.append(f"! {response.error}")
    return lines


def detail_text(request: WatchRequest, response: WatchResponse | None,
                stages: list[Stage]) -> str:
    lines = [f"#{request.id}  {request.method} {request.path}  {request.purpose}  "
             f"{request.model or ''}",
             t("watch.conversation", conversation=request.conversation or "—",
               appended=request.appended, removed=request.removed,
               rewritten=request.rewritten),
             t("watch.size", n=request.messages, chars=request.chars,
               tokens=request.est_tokens, bytes=request.body_bytes), ""]
    if request.breakdown:
        lines += [*breakdown_lines(request), ""]
    lines += [t("watch.waiting")] if response is None else answer_lines(response)
    for stage in stages:
        lines += ["", *stage_lines(stage)]
    return "\n".join(lines)


class RequestDetail(Static):
    """Text of the selected request; ``show()`` replaces it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(t("watch.no_request"), id=id, markup=False)
        self.border_title = t("watch.request")

    def show(self, request: WatchRequest, response: WatchResponse | None,
             stages: list[Stage]) -> None:
        self.update(detail_text(request, response, stages))


def changes_content(turn: TurnDiff | None, items: Sequence[Item]) -> Content:
    """What the selected request's counts count (its turn diff's entries, coloured) and its
    largest items: read from the bodies, so empty when the body is no longer held."""
    if turn is None and not items:
        return Content.styled(t("watch.no_items"), "dim")
    parts: list[Content] = []
    if turn is not None:
        parts += [Content.assemble((t("watch.diff") + " ", "bold"), counts_content(turn)),
                  *(block_content(b) for b in turn.blocks)]
    if items:
        parts += [Content(""), Content.styled(t("watch.items"), "bold"),
                  *(Content(f"  {short_size(i.total_chars):>6}  {item_label(i)}")
                    for i in items[:ITEMS_SHOWN])]
    return Content("\n").join(parts)
