"""What one strategy's engine did, read off its ``stage`` events as they are emitted.

An engine reports every change it makes to the history as a ``stage`` event (only when the
stage changed something), with the ledger of the tool results that left. The runner needs
three things from them and keeps nothing else: which stages ran before each request (a
request with any counts as one compaction), the summaries written (each a model call the
strategy would pay for), and the ledger, for what left and whether it is recoverable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.compact.stages import summary_stages
from core.compact.summarizer import Summarizer
from core.events import Error, Event, Stage
from core.measure import json_chars
from core.usage import Usage
from core.whatif.cache import request_tokens

SUMMARIES = summary_stages()


@dataclass
class SummaryWatch:
    """The last summary a strategy wrote: how many chars it summarised and how long it came
    out. Set by whoever produced the text (ctxlab's summarizer, or the recorded agent's
    summary chosen for it), read by the summary stage's event that follows."""

    summarised: int | None = None
    chars: int | None = None

    def saw(self, text: str | None, summarised: int) -> str | None:
        """``text`` came out of a summary call that read ``summarised`` chars."""
        if text is not None:
            self.summarised, self.chars = summarised, len(text)
        return text

    def take(self, event: Stage) -> tuple[int, int]:
        """(summarised chars, summary chars) for this summary stage: as seen, else the
        stage's own before and after sizes."""
        seen = (self.summarised, self.chars)
        self.summarised = self.chars = None
        return (seen[0] if seen[0] is not None else event.before_chars,
                seen[1] if seen[1] is not None else event.after_chars)


@dataclass
class WatchedSummarizer:
    """ctxlab's summarizer, telling the watch how long each summary came out and what the
    call read: the prepared input a summary call sends (the pipeline cuts the history to its
    summary input limit first), or, for the API's compaction (``whole_history``), the whole
    history, which the API's own compaction step reads."""

    inner: Summarizer
    watch: SummaryWatch
    whole_history: bool = False

    async def summarize(self, messages: list[dict], active_request: str,
                        prepared_input: str) -> str:
        text = await self.inner.summarize(messages, active_request, prepared_input)
        read = json_chars(messages) if self.whole_history else len(prepared_input)
        self.watch.saw(text, read)
        return text


@dataclass
class Tally:
    """One strategy's stage events, reduced to what the comparison counts."""

    ratio: float
    watch: SummaryWatch = field(default_factory=SummaryWatch)
    pending: list[str] = field(default_factory=list)  # stages since the last request
    side: Usage = field(default_factory=Usage)
    side_calls: int = 0
    ledger: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __call__(self, event: Event) -> Event:
        """The engines' ``emit``: stage events counted, archive errors kept as notes,
        everything else let go."""
        if isinstance(event, Stage):
            self.stage(event)
        elif isinstance(event, Error) and event.message not in self.errors:
            self.errors.append(event.message)
        return event

    def stage(self, event: Stage) -> None:
        self.pending.append(event.stage)
        self.ledger.extend(event.ledger)
        if event.stage in SUMMARIES:
            self.summary(*self.watch.take(event))

    def summary(self, summarised_chars: int, summary_chars: int) -> None:
        """A summary call: what it summarised as uncached input, the summary as output."""
        self.side = self.side + Usage(input=request_tokens(summarised_chars, self.ratio, 0),
                                      output=request_tokens(summary_chars, self.ratio, 0))
        self.side_calls += 1

    def take_stages(self) -> tuple[str, ...]:
        """The stages that ran since the last request (and forget them)."""
        stages = tuple(self.pending)
        self.pending.clear()
        return stages
