"""The strategies a recorded session can be played under, and the engine each one runs.

``original`` is the recording itself (what the agent sent, with its own compactions); every
other strategy is one of ctxlab's context engines (:mod:`core.compact`), given its own
workspace so its archive is its own, at limits in the session's own units: a token trigger
becomes chars at the session's measured ratio, as ``ctxlab replay`` converts its window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compact.api_compaction import ApiCompaction
from core.compact.clear_tool_uses import ApiClearToolUses
from core.compact.observation_masking import ObservationMasking
from core.compact.pipeline import Compactor
from core.compact.summarizer import Summarizer
from core.compact.truncate import SlidingWindow
from core.config import Thresholds
from core.events import Event
from core.measure import json_chars
from core.sources.replay.limits import CLAUDE_WINDOW, LimitMode, Limits, model_window, resolve
from core.sources.replay.model import Compaction, Message, Recording
from core.usage import context_tokens
from core.whatif.tally import SummaryWatch

ORIGINAL = "original"
STRATEGIES: dict[str, str] = {
    ORIGINAL: "as recorded: what the agent sent, its own compactions applied",
    "s08": "ctxlab's pipeline (budget, snip, micro, fit, summary) at the course's limits",
    "s08-window": "ctxlab's pipeline with its limits scaled to the model's context window",
    "api-clear-tool-uses": "the API's context editing: past the trigger, old tool results "
                           "become a placeholder (the last few kept)",
    "api-compaction": "the API's compaction: past the trigger, the history becomes a summary",
    "observation-masking": "the last few turns' tool observations kept whole, older ones "
                           "masked by a placeholder",
    "truncate": "sliding window at the model's window (or at the limits given): the newest "
                "messages that fit, the rest dropped",
}


class WhatIfError(ValueError):
    """Options the user must fix; the message is one line and names what exists."""


def parse_strategy_names(text: str) -> tuple[str, ...]:
    """``"s08,truncate"`` → the names in the order given, each once."""
    return checked_names(n.strip() for n in text.split(",") if n.strip())


def checked_names(given: Iterable[str]) -> tuple[str, ...]:
    """The names, each once, in order; an unknown one (or none) is an error naming every
    known strategy."""
    names = list(given)
    known = ", ".join(STRATEGIES)
    if not names:
        raise WhatIfError(f"no strategy given; choose from {known}")
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise WhatIfError(f"unknown strategy {unknown[0]!r}; choose from {known}")
    return tuple(dict.fromkeys(names))


@dataclass
class WhatIfOptions:
    """What to compare and with which parameters (the API's documented defaults)."""

    strategies: tuple[str, ...] = tuple(STRATEGIES)
    clear_trigger_tokens: int = 100_000
    clear_keep: int = 3
    compaction_trigger_tokens: int = 150_000
    mask_keep: int = 10
    thresholds: Thresholds | None = None  # s08's and truncate's limits; None = the course's
    # for s08, the model's window for truncate
    workdir: Path | None = None  # ctxlab's archives; None = a temp dir, removed after
    progress: Callable[[str, int, int], None] | None = None  # (strategy, request, total)
    # Processes to run the strategies in: None = automatic (one per strategy, at most one
    # per core, none for a short session); 1 = one after the other in this process.
    processes: int | None = None


@dataclass
class SessionShape:
    """What the engines need to know of the session: its ratio, overhead and window."""

    ratio: float
    overhead_tokens: int
    model: str | None = None
    window_tokens: int | None = None  # the window the file states
    seen_tokens: int = 0  # the most context tokens a recorded request used


def session_shape(recording: Recording, ratio: float, overhead_tokens: int) -> SessionShape:
    seen = max((context_tokens(e.usage) or 0 for e in recording.exchanges), default=0)
    return SessionShape(ratio, overhead_tokens, recording.model, recording.window_tokens, seen)


def window_of(shape: SessionShape) -> int:
    """The model's context window in tokens: the one the file states, else the one its
    model is known to have (the long one when a request used more than the standard)."""
    return shape.window_tokens or model_window(shape.model, shape.seen_tokens) or CLAUDE_WINDOW


def window_limits(base: Thresholds, shape: SessionShape) -> Limits:
    """``base`` scaled to what the model's window leaves for the messages: the window less
    the fixed overhead every request carries (system prompt, tools), so a strategy held to
    its limit never sends a request the window could not take."""
    room = max(window_of(shape) - shape.overhead_tokens, 1)
    return resolve(base, LimitMode.TOKENS, shape.ratio, tokens=room)


@dataclass
class RecordedSummaries:
    """The recorded agent's own summaries, for ``api-compaction``: at a compaction, the
    next summary the agent wrote at or after that point in the recording, else its last.
    ``position`` is the step being played (the runner moves it)."""

    summaries: list[tuple[int, str]] = field(default_factory=list)  # (step index, text)
    position: int = 0
    watch: SummaryWatch = field(default_factory=SummaryWatch)  # told each summary's length

    @classmethod
    def of(cls, recording: Recording, watch: SummaryWatch) -> RecordedSummaries:
        return cls([(i, s.summary) for i, s in enumerate(recording.steps)
                    if isinstance(s, Compaction) and s.summary.strip()], watch=watch)

    def __call__(self, history: list[Message]) -> str | None:
        if not self.summaries:
            return None
        text = next((t for i, t in self.summaries if i >= self.position), self.summaries[-1][1])
        return self.watch.saw(text, json_chars(history))  # the API's step reads it all


@dataclass
class EngineSetup:
    """How to build one strategy's engine; ``notes`` say what it ran at."""

    workspace: Path
    shape: SessionShape
    options: WhatIfOptions
    summarizer: Summarizer
    emit: Callable[[Event], Any]
    summaries: RecordedSummaries


def make_engine(name: str, setup: EngineSetup) -> tuple[Compactor, tuple[str, ...]]:
    """The engine of strategy ``name`` and a line on the limits it runs at."""
    shape, options = setup.shape, setup.options
    course = options.thresholds or Thresholds()
    common: dict[str, Any] = {"summarizer": setup.summarizer, "emit": setup.emit}
    if name == "s08":
        return (Compactor(setup.workspace, course, **common),
                (f"limits: {course.context_limit:,} chars, {course.max_messages} messages",))
    if name == "truncate" and options.thresholds is not None:
        # Limits given (a scenario's, to compare with its own run): cut where it cuts.
        return (SlidingWindow(setup.workspace, course, **common),
                (f"limits as given: {course.context_limit:,} chars",))
    if name in ("s08-window", "truncate"):
        scaled = window_limits(course, shape).thresholds
        engine = Compactor if name == "s08-window" else SlidingWindow
        return (engine(setup.workspace, scaled, **common),
                (f"limits scaled to the model's window less the fixed overhead "
                 f"({window_of(shape) - shape.overhead_tokens:,} tokens): "
                 f"{scaled.context_limit:,} chars, {scaled.max_messages} messages",))
    if name == "api-clear-tool-uses":
        limits = course.replace(keep_recent=options.clear_keep)
        return (ApiClearToolUses(setup.workspace, limits, chars_per_token=shape.ratio,
                                 overhead_tokens=shape.overhead_tokens,
                                 trigger_tokens=options.clear_trigger_tokens, **common),
                (f"trigger {options.clear_trigger_tokens:,} tokens, keep "
                 f"{options.clear_keep} tool uses",))
    if name == "api-compaction":
        engine_c = ApiCompaction(setup.workspace, course, **common,
                                 trigger_tokens=options.compaction_trigger_tokens,
                                 chars_per_token=shape.ratio,
                                 overhead_tokens=shape.overhead_tokens,
                                 summary_text=setup.summaries)
        return engine_c, (f"trigger {options.compaction_trigger_tokens:,} tokens",
                          summary_source(setup.summaries))
    if name == "observation-masking":
        return (ObservationMasking(setup.workspace, course, keep=options.mask_keep, **common),
                (f"the last {options.mask_keep} turns' tool observations kept whole",))
    raise WhatIfError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")


def summary_source(summaries: RecordedSummaries) -> str:
    if summaries.summaries:
        return (f"summaries: the recorded agent's own ({len(summaries.summaries)} in the "
                "recording), the next one at or after each compaction")
    return "summaries: ctxlab's offline summarizer (the recording holds none of its own)"
