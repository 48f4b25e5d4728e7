"""The original agent's side of a replay: its history as it sent it, and its token ratio.

:class:`OriginalHistory` follows the recording step by step (append the input, adopt the
reply, reset at the agent's own compaction, or take a recorded body whole) and keeps its
size the way :class:`~core.measure.Measured` does — one JSON length per message — and its
split into the one category vocabulary (:mod:`core.compact.breakdown`), as ctxlab's side is
split, so the two compare like with like.

:func:`chars_per_token` measures the session's own ratio from recorded usage. The input
tokens of a request cover the system prompt and tool schemas too, which transcripts do not
record, so the ratio is the *slope* of tokens over history chars across requests (a least
squares fit: the unseen constant part falls into the intercept), not a plain quotient.
:func:`ratio_fit` keeps that intercept too (:attr:`RatioFit.overhead_tokens`): the tokens
every request carried that the recording does not show, which the Window view draws as
their own category rather than spreading them over the messages.
The base64 data of images and documents is left out of the chars fitted: an image costs
tokens by its pixels, not by its bytes, so one pasted screenshot (a megabyte of base64 for
~1,600 tokens) would otherwise double the ratio, and every token limit converted with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.compact.breakdown import BreakdownCache, Sizes
from core.measure import json_chars, list_chars
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.usage import context_tokens

ESTIMATE_RATIO = 4.0  # core.measure.estimate_tokens: one token per 4 (non-CJK) chars
SANE_RATIO = (1.0, 12.0)
CLEARED = "[Old tool result content cleared]"  # Claude Code's marker for a cleared result


def legacy_categories(breakdown: Sizes) -> dict[str, int]:
    """``replay_step.categories`` as logs before the breakdown had it (text, tool_use,
    tool_result, thinking, image), derived from the breakdown for scripts that read it."""
    part = breakdown.get
    return {"text": part("text", 0) + part("summaries", 0),
            "tool_use": part("tool_calls", 0),
            "tool_result": part("tool_results", 0) + part("pointers", 0),
            "thinking": part("thinking", 0), "image": part("images", 0)}


class OriginalHistory:
    """The original agent's history, sized incrementally."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.sizes: list[int] = []
        self.media: list[int] = []  # each message's base64 image/document chars
        self._split = BreakdownCache()  # each message split once, when a step asks

    @property
    def chars(self) -> int:
        return list_chars(self.sizes)

    @property
    def text_chars(self) -> int:
        """:attr:`chars` without the base64 data of images and documents."""
        return self.chars - sum(self.media)

    def breakdown(self, system_chars: int = 0) -> Sizes:
        """The history as it was sent, by category (adding up to :attr:`chars`), and the
        recorded system prompt's length when the recording has one."""
        return with_system(self._split.totals(self.messages), system_chars)

    def step_categories(self, system_chars: int) -> tuple[dict[str, int], Sizes]:
        """:meth:`category_chars` and :meth:`breakdown` at once, from one count (a replay
        step reports both)."""
        messages = self._split.totals(self.messages)
        return legacy_categories(messages), with_system(messages, system_chars)

    def category_chars(self) -> dict[str, int]:
        return legacy_categories(self.breakdown())

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self.sizes.append(json_chars(message))
        self.media.append(media_chars(message.get("content")))

    def reset(self, messages: list[Message]) -> None:
        self.messages, self.sizes, self.media = [], [], []
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
            self.media[i] = media_chars(self.messages[i].get("content"))


def with_system(messages: Sizes, system_chars: int) -> Sizes:
    return {"system": system_chars, **messages} if system_chars else messages


def media_chars(content: Any) -> int:
    """The base64 ``data`` chars of the image and document blocks in ``content`` (tool
    results' content included)."""
    if not isinstance(content, list):
        return 0
    total = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        source = block.get("source")
        if block.get("type") in ("image", "document") and isinstance(source, dict) \
                and isinstance(source.get("data"), str):
            total += len(source["data"])
        elif block.get("type") == "tool_result":
            total += media_chars(block.get("content"))
    return total


def as_sent(recording: Recording) -> Iterator[tuple[Exchange, OriginalHistory]]:
    """Each request of the recording with the original's history as it went out (the
    agent's own compactions applied in between); the history moves on once the caller
    takes the next one."""
    history = OriginalHistory()
    for step in recording.steps:
        if isinstance(step, Compaction):
            history.compact(step)
            history.after_compaction(step)
            continue
        history.before_request(step)
        yield step, history
        history.after_reply(step)


@dataclass(frozen=True)
class RatioFit:
    """The session's ratio, where it came from, and the fit's intercept in tokens (``None``
    when the ratio is not a fitted slope, or the intercept came out negative: noise, not
    an overhead)."""

    ratio: float
    source: str  # "usage" or "estimate"
    overhead_tokens: int | None = None


def chars_per_token(recording: Recording) -> tuple[float, str]:
    """``(ratio, source)``: measured from usage (``"usage"``) or the estimate's 4.0."""
    fit = ratio_fit(recording)
    return fit.ratio, fit.source


def ratio_fit(recording: Recording) -> RatioFit:
    """The ratio as :func:`chars_per_token` measures it, with the fit's intercept."""
    points: list[tuple[int, int]] = []
    system = len(recording.system)
    for step, history in as_sent(recording):
        tokens = context_tokens(step.usage)
        if tokens:
            points.append((history.text_chars + system, tokens))
    slope = _slope(points)
    if slope is not None:
        ratio, intercept = slope
        return RatioFit(ratio, "usage", intercept if intercept > 0 else None)
    ratio_mean = _mean_ratio(points)
    return RatioFit(ratio_mean, "usage") if ratio_mean else RatioFit(ESTIMATE_RATIO, "estimate")


def _sane(ratio: float) -> float | None:
    return ratio if SANE_RATIO[0] <= ratio <= SANE_RATIO[1] else None


def _slope(points: list[tuple[int, int]]) -> tuple[float, int] | None:
    """``(chars per token, intercept in tokens)`` of the least-squares line through
    ``(chars, tokens)``, when there is one and its ratio is sane."""
    if len({c for c, _ in points}) < 3:
        return None
    n = len(points)
    mean_c = sum(c for c, _ in points) / n
    mean_t = sum(t for _, t in points) / n
    var = sum((c - mean_c) ** 2 for c, _ in points)
    cov = sum((c - mean_c) * (t - mean_t) for c, t in points)
    if var <= 0 or cov <= 0:
        return None
    ratio = _sane(var / cov)
    if ratio is None:
        return None
    return ratio, round(mean_t - mean_c / ratio)


def _mean_ratio(points: list[tuple[int, int]]) -> float | None:
    tokens = sum(t for _, t in points)
    return _sane(sum(c for c, _ in points) / tokens) if tokens else None
