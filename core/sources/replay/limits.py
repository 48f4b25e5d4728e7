"""The limits ctxlab's side of a replay runs at, for every replay format.

The course's thresholds (50,000 chars, 50 messages) are a teaching budget: against a real
session that filled a 200,000-token window they snip and summarise from the first minutes
(192 snips on one real session), which says nothing about the agent that was recorded. So
by default a replay scales them to the recorded model's context window (200,000 tokens for
Claude models, 1,000,000 when a recorded request used more than that: the long-context
window Claude Code's default model runs with; the window a Codex rollout states,
``model_context_window``, when the file has one): the char limit becomes the window in tokens
times the session's measured chars-per-token ratio, and the
message-count rule grows by the same factor (the course allows 50 messages per 50,000
chars; a small token limit never takes it below those 50). ``--context-limit-tokens``
replaces the window and is scaled the same way; ``--course-limits`` keeps the course's
numbers. A limit given in chars on the command line
(``--context-limit``, ``--max-messages``) is always kept as given, and the message rule
then follows the given char limit. Which of these applied
is said in ``replay_start`` (``limits``, and in words by ``ReplayStart.limits_line``), so a
reader never mistakes one for the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.config import Thresholds

CLAUDE_WINDOW = 200_000  # every Claude model's standard context window, in tokens
LONG_WINDOW = 1_000_000  # the long-context window (Claude Code's default "[1m]" model)
COURSE = Thresholds()


class LimitMode(StrEnum):
    """How ctxlab's side got its limits (the wire value of ``replay_start.limits``)."""

    WINDOW = "window"  # scaled to the recorded model's context window (the default)
    TOKENS = "tokens"  # scaled to --context-limit-tokens
    COURSE = "course"  # the course's teaching budget (--course-limits)
    GIVEN = "given"  # exactly the thresholds a caller passed (tests, the sample)


@dataclass(frozen=True)
class Limits:
    """What was applied: the thresholds, how they were reached, and from what window."""

    thresholds: Thresholds
    mode: LimitMode
    window_tokens: int | None = None  # the tokens the char limit was scaled from


def model_window(model: str | None, seen: int = 0) -> int | None:
    """The recorded model's context window in tokens, when ctxlab knows it. A request
    that used more than the standard window (``seen`` tokens) shows the session ran with
    the long one: the recording names the model, not the window it was run with."""
    if seen > CLAUDE_WINDOW:
        return LONG_WINDOW
    return CLAUDE_WINDOW if model and model.lower().startswith("claude") else None


def resolve(base: Thresholds, mode: LimitMode, ratio: float, *, model: str | None = None,
            tokens: int | None = None, explicit: frozenset[str] = frozenset(),
            seen: int = 0, recorded: int | None = None) -> Limits:
    """``base`` scaled as ``mode`` says; the keys in ``explicit`` (given in chars or as a
    count on the command line) stay as ``base`` has them. ``seen``: the most context
    tokens a recorded request used; ``recorded``: the window the file itself states (a
    Codex rollout's ``model_context_window``), which wins over any guess from the name."""
    if mode in (LimitMode.COURSE, LimitMode.GIVEN):
        if tokens is None:
            return Limits(base, mode)
        mode = LimitMode.TOKENS
    window: int | None = tokens if tokens is not None else \
        recorded or model_window(model, seen) or CLAUDE_WINDOW
    changes: dict[str, int] = {}
    if "context_limit" not in explicit:
        changes["context_limit"] = max(int((window or CLAUDE_WINDOW) * ratio), 1)
    elif tokens is None:  # the char limit was given: nothing is scaled to a window
        mode, window = LimitMode.GIVEN, None
    if "max_messages" not in explicit:
        # the course's messages per char, at the char limit that applies
        limit = changes.get("context_limit", base.context_limit)
        scaled = round(COURSE.max_messages * limit / COURSE.context_limit)
        changes["max_messages"] = max(scaled, COURSE.max_messages, base.snip_head + 2)
    return Limits(base.replace(**changes), mode if tokens is None else LimitMode.TOKENS,
                  window)
