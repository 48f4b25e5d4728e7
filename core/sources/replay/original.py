"""The original agent's side of a replay: its history as it sent it, and its token ratio.

:class:`OriginalHistory` follows the recording step by step (append the input, adopt the
reply, reset at the agent's own compaction, or take a recorded body whole) and keeps its
size the way :class:`~core.measure.Measured` does — one JSON length per message — plus a
per-category split (text, tool_use, tool_result, thinking, image) for the meter.

:func:`chars_per_token` measures the session's own ratio from recorded usage. The input
tokens of a request cover the system prompt and tool schemas too, which transcripts do not
record, so the ratio is the *slope* of tokens over history chars across requests (a least
squares fit: the unseen constant part falls into the intercept), not a plain quotient.
"""

from __future__ import annotations

from collections import Counter

from core.measure import json_chars, list_chars
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.usage import context_tokens

ESTIMATE_RATIO = 4.0  # core.measure.estimate_tokens: one token per 4 (non-CJK) chars
SANE_RATIO = (1.0, 12.0)
CLEARED = "[Old tool result content cleared]"  # Claude Code's marker for a cleared result
CATEGORIES = ("text", "tool_use", "tool_result", "thinking", "image")


def categories(message: Message) -> Counter[str]:
    """JSON chars of each block category in one message (a string content is text)."""
    found: Counter[str] = Counter()
    content = message.get("content")
    if isinstance(content, str):
        found["text"] += json_chars(content)
        return found
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in ("thinking", "redacted_thinking"):
            found["thinking"] += json_chars(block)
        elif kind == "image":
            found["image"] += json_chars(block)
        elif kind == "tool_result" and isinstance(block.get("content"), list):
            for inner in block["content"]:
                is_image = isinstance(inner, dict) and inner.get("type") == "image"
                found["image" if is_image else "tool_result"] += json_chars(inner)
        elif kind in ("tool_use", "tool_result"):
            found[kind] += json_chars(block)
        else:
            found["text"] += json_chars(block)
    return found


class OriginalHistory:
    """The original agent's history, sized incrementally."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.sizes: list[int] = []
        self.cats: list[Counter[str]] = []

    @property
    def chars(self) -> int:
        return list_chars(self.sizes)

    def category_chars(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for c in self.cats:
            total.update(c)
        return {k: total.get(k, 0) for k in CATEGORIES}

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self.sizes.append(json_chars(message))
        self.cats.append(categories(message))

    def reset(self, messages: list[Message]) -> None:
        self.messages, self.sizes, self.cats = [], [], []
        for m in messages:
            self.append(m)

    def before_request(self, step: Exchange) -> None:
        """The history as the request was sent."""
        if step.sent is not None:
            self.reset(step.sent)
        else:
            for m in step.input:
                self.append(m)

    def after_reply(self, step: Exchange) -> None:
        if step.reply is not None:
            self.append(step.reply)

    def compact(self, step: Compaction) -> None:
        for m in step.input:
            self.append(m)

    def after_compaction(self, step: Compaction) -> None:
        if step.cleared is None:
            self.reset(step.kept)
            return
        ids = set(step.cleared)
        for i, message in enumerate(self.messages):
            content = message.get("content")
            if not isinstance(content, list) or not any(
                    isinstance(b, dict) and b.get("tool_use_id") in ids for b in content):
                continue
            cleared = [{**b, "content": CLEARED} if isinstance(b, dict)
                       and b.get("type") == "tool_result" and b.get("tool_use_id") in ids
                       else b for b in content]
            self.messages[i] = {**message, "content": cleared}
            self.sizes[i] = json_chars(self.messages[i])
            self.cats[i] = categories(self.messages[i])


def chars_per_token(recording: Recording) -> tuple[float, str]:
    """``(ratio, source)``: measured from usage (``"usage"``) or the estimate's 4.0."""
    history = OriginalHistory()
    points: list[tuple[int, int]] = []
    system = len(recording.system)
    for step in recording.steps:
        if isinstance(step, Compaction):
            history.compact(step)
            history.after_compaction(step)
            continue
        history.before_request(step)
        tokens = context_tokens(step.usage)
        if tokens:
            points.append((history.chars + system, tokens))
        history.after_reply(step)
    ratio = _slope_ratio(points) or _mean_ratio(points)
    return (ratio, "usage") if ratio else (ESTIMATE_RATIO, "estimate")


def _sane(ratio: float) -> float | None:
    return ratio if SANE_RATIO[0] <= ratio <= SANE_RATIO[1] else None


def _slope_ratio(points: list[tuple[int, int]]) -> float | None:
    if len({c for c, _ in points}) < 3:
        return None
    n = len(points)
    mean_c = sum(c for c, _ in points) / n
    mean_t = sum(t for _, t in points) / n
    var = sum((c - mean_c) ** 2 for c, _ in points)
    cov = sum((c - mean_c) * (t - mean_t) for c, t in points)
    if var <= 0 or cov <= 0:
        return None
    return _sane(var / cov)


def _mean_ratio(points: list[tuple[int, int]]) -> float | None:
    tokens = sum(t for _, t in points)
    return _sane(sum(c for c, _ in points) / tokens) if tokens else None
