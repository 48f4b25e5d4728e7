"""One request's context window in tokens, filled by category: what ``/context`` shows.

A :class:`Window` is one request of one side (:mod:`core.views.requests`): the model's
window, the request's tokens split by what they are spent on — the parts sent with every
call (system prompt, tool definitions, memory, pinned files; in a replay, the overhead the
transcript does not record) and the messages by the one category vocabulary
(:mod:`core.compact.breakdown`) — the free space, and the marks where compaction fires.
Every token figure has its chars beside it, since the course budgets in chars.

Tokens per category are the category's chars ÷ the session's chars-per-token ratio, then
scaled so that they add up to the request's tokens *exactly* (largest-remainder rounding):
the API counts the request as a whole, never by category, so a per-category figure is
always an apportioning; one that did not add up to the count a reader sees beside it (or
left a cell of the grid unexplained) would make the view look wrong where only the
rounding is. A single ratio makes the apportioning proportional to chars.

In a replay the transcript does not record the system prompt and tool schemas, but every
request carried them: the ratio fit's intercept (``replay_start.overhead_tokens``) is that
fixed part, shown as its own category and not spread over the messages. ctxlab's side of a
replay carries it too (the same agent would send the same prompt and tools), added to
ctxlab's estimate of its messages.

The marks: ctxlab's trigger and target are thresholds on the *messages'* chars, so they
sit after the parts sent with every call; another agent's auto-compaction is on the whole
context, where its boundary records say it fired (``pre_tokens``), and the buffer is the
window less that. Each says where it came from: ``configured``, ``recorded`` or
``derived``; a buffer no record shows is ``unknown``, never guessed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.compact.breakdown import MESSAGE_CATEGORIES, SENT_EVERY_CALL
from core.config import Thresholds
from core.sources.replay.limits import model_window
from core.views.requests import RequestLog, RequestPoint, Side

OVERHEAD = "overhead"  # a replay's unrecorded system prompt and tool definitions
UNSPLIT = "unsplit"  # an older log's request with no breakdown: its messages whole
PER_CALL = (OVERHEAD, "system", "tools", "memory", "recalled", "pinned")
CATEGORY_ORDER = (*PER_CALL, *MESSAGE_CATEGORIES, UNSPLIT)
ESTIMATE_RATIO = 4.0  # core.measure.estimate_tokens: one token per 4 (non-CJK) chars
SCALE = 1.25  # no model window known: the bar spans 125% of the trigger, as the meter does
assert set(SENT_EVERY_CALL) <= set(PER_CALL)


@dataclass(frozen=True)
class Part:
    """One category of the request: its tokens and, where recorded, its chars."""

    category: str
    tokens: int
    chars: int | None  # None: not recorded (the replay's overhead)
    per_call: bool  # sent with every call, not counted by ctxlab's trigger


@dataclass(frozen=True)
class Mark:
    """A threshold on the window: ``trigger`` and ``target`` (ctxlab's) or ``auto_compact``
    (the recorded agent's or the watched client's own)."""

    kind: str
    tokens: int  # its place in the window
    chars: int | None  # the threshold in chars, when it is one
    source: str  # "configured", "recorded" or "derived"


@dataclass(frozen=True)
class Window:
    """One request of one side, as the window view draws it and ``--json`` prints it.

    ``sum(parts) == tokens`` and ``tokens + free_tokens == window_tokens + over_tokens``."""

    side: Side
    index: int
    model: str | None
    window_tokens: int
    window_source: str  # "model" (its name, or the recording, says it) or "scale" (unknown)
    tokens: int
    counted: bool  # the API counted the request (else ctxlab's estimate)
    chars_per_token: float
    parts: tuple[Part, ...]
    free_tokens: int
    over_tokens: int
    marks: tuple[Mark, ...]
    buffer_tokens: int | None  # the window less the first compaction mark
    buffer_source: str  # as that mark's source, or "unknown"

    @property
    def chars(self) -> int:
        """The recorded chars of every part (the overhead has none)."""
        return sum(p.chars or 0 for p in self.parts)

    def part(self, category: str) -> Part | None:
        return next((p for p in self.parts if p.category == category), None)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["chars"] = self.chars
        return data


def ordered(sides: Sequence[Side]) -> list[Side]:
    """Sides as the views show them: the recorded original above ctxlab's, then a watch."""
    return sorted(sides, key=("original", "ctxlab", "watched").index)


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, summing to it exactly: each share
    rounded down, the units left over to the largest remainders (ties: the earlier)."""
    whole = sum(weights)
    if total <= 0 or whole <= 0:
        return [0] * len(weights)
    shares = [total * w // whole for w in weights]
    left = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:left]:
        shares[i] += 1
    return shares


def _recorded_chars(point: RequestPoint) -> list[tuple[str, int]]:
    """The point's chars by category, in :data:`CATEGORY_ORDER`, zeros left out."""
    parts = point.breakdown
    found = [(k, int(parts.get(k) or 0)) for k in CATEGORY_ORDER if k != OVERHEAD]
    found = [(k, v) for k, v in found if v > 0]
    return found or [(UNSPLIT, point.chars)]


def _replaying(log: RequestLog) -> bool:
    return log.chars_per_token is not None


def _window_size(log: RequestLog, point: RequestPoint) -> int | None:
    if point.side == "watched":
        return model_window(point.model, point.tokens or 0)
    if _replaying(log):
        if log.limits == "window" and log.context_limit_tokens:
            return log.context_limit_tokens  # what the replay scaled ctxlab's limits to
        return model_window(log.model, log.most_tokens["original"])
    return model_window(log.model, point.tokens or 0)


def _ratio(log: RequestLog, point: RequestPoint) -> float:
    if point.side != "watched" and log.chars_per_token:
        return log.chars_per_token
    return ESTIMATE_RATIO


def _ctxlab_marks(limits: Thresholds | None, log: RequestLog, ratio: float,
                  per_call: int) -> list[Mark]:
    if limits is None:
        if log.context_limit is None:
            return []
        limits = Thresholds(context_limit=log.context_limit)
    return [Mark(kind, per_call + round(chars / ratio), chars, "configured")
            for kind, chars in (("target", limits.target), ("trigger", limits.context_limit))]


def _agent_marks(log: RequestLog, side: Side) -> list[Mark]:
    """Where the agent's own automatic compaction fired: the lowest ``pre_tokens`` any of
    its boundary records states (it fires once the context passes its trigger, so the
    lowest seen is the closest to the trigger itself)."""
    lowest = log.lowest_auto[side]
    return [Mark("auto_compact", lowest, None, "recorded")] if lowest else []


def _overhead(log: RequestLog, point: RequestPoint) -> int:
    """A replay's unrecorded system prompt and tools, which every request of it carried."""
    return (log.overhead_tokens or 0) if _replaying(log) and point.side != "watched" else 0


def _unfitted(log: RequestLog, point: RequestPoint) -> bool:
    """A replayed original's counted request in a session whose overhead no fit measured
    (too few answers, or no usage: ``replay_start.overhead_tokens`` is None)."""
    return (_replaying(log) and point.side == "original" and point.counted
            and log.overhead_tokens is None)


def _sent_alike(log: RequestLog, point: RequestPoint) -> list[Part]:
    """What ctxlab's side of a replay sends with every call besides its messages: the same
    agent sends the same system prompt and tools, so the recorded original's per-call parts
    at the same step (its unrecorded overhead and, where the file has it, its system
    prompt). Nothing for any other request."""
    if point.side != "ctxlab" or not _replaying(log):
        return []
    original = log.find("original", point.index)
    if original is None:
        return []
    window = window_of(log, "original", original.index)
    return [p for p in window.parts if p.per_call] if window is not None else []


def request_tokens(log: RequestLog, point: RequestPoint) -> int:
    """The tokens a request filled, as every view draws them (the window, the timeline,
    the report): the API's count where an answer said, else the estimate — and ctxlab's
    side of a replay, an estimate of its messages, gets what the original sent with the
    same step on top (:func:`_sent_alike`), so the two sides compare like with like; an
    uncounted original request gets the fitted overhead."""
    tokens = point.context_tokens
    if point.side == "ctxlab" and _replaying(log):
        return tokens + sum(p.tokens for p in _sent_alike(log, point))
    if not point.counted:
        tokens += _overhead(log, point)
    return tokens


def trigger(log: RequestLog, side: Side, limits: Thresholds | None = None) -> Mark | None:
    """Where ``side`` compacts, at its latest request: ctxlab's trigger, or the recorded
    agent's own auto-compaction (None where nothing says)."""
    window = window_of(log, side, limits=limits)
    if window is None:
        return None
    return min((m for m in window.marks if m.kind != "target"), key=lambda m: m.tokens,
               default=None)


def window_of(log: RequestLog, side: Side, index: int | None = None, *,
              limits: Thresholds | None = None) -> Window | None:
    """Request ``index`` of ``side`` (its own numbering; the latest when ``None``) as a
    :class:`Window`; ``None`` when the side has no such request. ``limits``: ctxlab's
    thresholds in force (the app's, the run's); without them a replay's are read from
    ``replay_start`` (its char limit, the target at the default ratio)."""
    points = log.side(side)
    point = (points[-1] if points else None) if index is None else log.find(side, index)
    if point is None:
        return None
    ratio = _ratio(log, point)
    tokens = request_tokens(log, point)
    recorded = _recorded_chars(point)
    alike = _sent_alike(log, point)
    if alike:  # ctxlab's side of a replay: the original's per-call parts, then its own
        besides = sum(p.tokens for p in alike)
        recorded = [(k, chars) for k, chars in recorded if k not in PER_CALL] or recorded
        shares = apportion(tokens - besides, [chars for _, chars in recorded])
        parts = [*alike, *(Part(k, n, chars, False)
                           for (k, chars), n in zip(recorded, shares, strict=True))]
    else:
        overhead = min(_overhead(log, point), tokens)
        if _unfitted(log, point):
            # no fit of the session's tokens: what the count holds besides the recorded
            # chars at the ratio is what the transcript does not record (never spread)
            overhead = max(0, tokens - round(sum(chars for _, chars in recorded) / ratio))
        shares = apportion(tokens - overhead, [chars for _, chars in recorded])
        parts = ([Part(OVERHEAD, overhead, None, True)] if overhead else []) + [
            Part(k, n, chars, k in PER_CALL)
            for (k, chars), n in zip(recorded, shares, strict=True)]
    per_call = sum(p.tokens for p in parts if p.per_call)
    marks = (_ctxlab_marks(limits, log, ratio, per_call) if side == "ctxlab"
             else _agent_marks(log, side))
    size = _window_size(log, point)
    source = "model"
    if size is None:  # steady from request to request: the marks, unless it overflows
        top = round(max((m.tokens for m in marks), default=0) * SCALE)
        size, source = max(top, tokens, 1), "scale"
    first = min((m for m in marks if m.kind != "target"), key=lambda m: m.tokens, default=None)
    if source == "scale":
        first = None  # room past a mark in a window nobody knows is no buffer
    buffer = None if first is None else size - first.tokens
    buffer_source = "unknown" if first is None else (
        "configured" if first.source == "configured" else "derived")
    return Window(side=side, index=point.index, model=point.model or log.model,
                  window_tokens=size, window_source=source, tokens=tokens,
                  counted=point.counted, chars_per_token=ratio, parts=tuple(parts),
                  free_tokens=max(0, size - tokens), over_tokens=max(0, tokens - size),
                  marks=tuple(marks), buffer_tokens=buffer, buffer_source=buffer_source)
