"""Which recorded usage belongs to which of a Codex rollout's requests.

Codex writes a response's usage as an ``event_msg``/``token_count`` line, but not at one
fixed place: 0.58 writes it *before* the response's items (and again, unchanged, when the
next request starts), 0.171 after the items and the tool outputs, often several times per
response, and adds one ``token_usage_record`` line per response (with its ``response_id``)
right after the response's items. Cutting requests at each ``token_count`` (what replay did)
gave a 0.58 rollout no usage at all.

So the usage lines are first reduced to one usage per response — the
``token_usage_record`` lines when the rollout has any (they are the exact per-response
record), else each ``token_count`` whose ``total_token_usage`` differs from the previous
one (a repeat has the same total) — and then matched to replies by order, whichever comes
first: a usage that arrives while a reply is waiting for one is that reply's; one that
arrives when every reply has its usage waits for the next reply (or for the compaction it
paid for, which is how a local compaction's summary call and a remote compaction's call
show in a rollout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.sources.replay.model import Exchange
from core.sources.replay.responses_items import BadItem
from core.sources.replay.shape import usage_problem
from core.sources.replay.steps import StepBuilder
from core.usage import Usage


def counts(usage: Any, where: str) -> dict[str, Any] | None:
    """A Codex usage object (``input_tokens`` counting cached input and cache writes) in
    the Messages API's terms (:meth:`Usage.from_codex`), the reasoning count kept apart."""
    if not isinstance(usage, dict):
        return None
    problem = usage_problem(usage, where)
    if problem:
        raise BadItem(problem)
    found = Usage.from_codex(usage)
    if found is None:
        return None
    reasoning = usage.get("reasoning_output_tokens")
    return {**found.to_api(),
            "reasoning_output_tokens": reasoning if isinstance(reasoning, int)
            and not isinstance(reasoning, bool) else 0}


def usage_of(info: Any) -> dict[str, Any] | None:
    """A ``token_count``'s ``info.last_token_usage``, translated (None when it has none)."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    return counts(last, "info.last_token_usage")


def window_of(payload: dict[str, Any]) -> int | None:
    """The ``model_context_window`` a line states (``token_count``'s ``info``, 0.171's
    ``task_started`` and ``turn_context``), when it is a positive count."""
    info = payload.get("info")
    for source in (payload, info if isinstance(info, dict) else {}):
        window = source.get("model_context_window")
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            return window
    return None


@dataclass
class ResponseUsage:
    """The usage lines reduced to one usage per response, in order."""

    records: bool = False  # the rollout has token_usage_record lines: token_counts repeat them
    last_total: Any = None
    repeats: int = 0

    def new(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The usage of a new response this line carries, or None (a repeat, an empty
        count, or a ``token_count`` beside the exact records)."""
        if kind == "token_usage_record":
            return counts(payload.get("usage"), "token_usage_record.usage")
        info = payload.get("info")
        if self.records or not isinstance(info, dict):
            return None
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            self.repeats += 1
            return None
        self.last_total = total
        return usage_of(info)


@dataclass
class UsageMatcher:
    """Gives each reply the usage of its response, whichever of the two came first."""

    steps: StepBuilder
    waiting: list[dict[str, Any]] = field(default_factory=list)

    def arrived(self, usage: dict[str, Any]) -> None:
        steps = self.steps
        if steps.reply is not None and not steps.closed:
            if steps.usage is None:
                steps.usage = usage
                steps.closed = True  # its usage came after it: the response is complete
                return
            steps.closed = True  # the next response's usage: this one is complete
        elif steps.reply is None and (last := self._last_exchange()) is not None \
                and last.usage is None:
            last.usage = usage  # its tool outputs were written before its usage
            return
        self.waiting.append(usage)

    def reply_started(self) -> None:
        """A new reply began: it takes the usage that came before it, if one did."""
        if self.waiting and self.steps.usage is None:
            self.steps.usage = self.waiting.pop(0)

    def take_waiting(self) -> dict[str, Any] | None:
        """The usage no reply took: a compaction's own call."""
        return self.waiting.pop(0) if self.waiting else None

    def _last_exchange(self) -> Exchange | None:
        steps = self.steps.recording.steps
        last = steps[-1] if steps else None
        return last if isinstance(last, Exchange) else None
