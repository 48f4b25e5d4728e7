"""The Messages API's server compaction played offline: past the trigger, one summary.

The API's compaction (``compact_20260112``) summarises the conversation once a request's
input passes its trigger (150,000 tokens by default) and from then on ignores everything
before its compaction block. ctxlab already shows the real thing when the API does it
(:mod:`core.sources.agent.api_stages`: an ``api_compaction`` stage by ``api-compact``, the
ignored messages saved as a transcript). This engine plays it offline so a recorded session
can be priced under it beside the other strategies:

* **trigger** — the request's input tokens: its messages' JSON chars at ``chars_per_token``
  plus ``overhead_tokens`` (the system prompt and tools every request carries), rounded as
  a what-if run converts every request, so "over the trigger" means what its table shows.
* **what stays** — the latest turn: from the last assistant message on (its tool uses with
  their results, or its reply and the user's next prompt), as the API keeps the messages
  after its block; so a tool_use is never separated from its results.
* **the summary** — ``summary_text(history)`` when the caller has one (a recorded agent's own
  summary, so the summary's size is the real one), else the compactor's summarizer —
  ctxlab's offline one unless another is given. The history is saved as a transcript
  first (ledger ``where`` names it). Like every summary stage it counts as a side call
  (``api_compaction`` is a summarising row of the stage table).

It never clears or drops anything else; ``compact`` and overflow recovery are the s08
engine's, as with the other offline managers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.compact.context import StageRun
from core.compact.sent import FollowingCompactor
from core.compact.stages import API_COMPACTION
from core.compact.summarizer import Summarizer
from core.compact.summary import ledger_to_transcript, summary_input, summary_message
from core.compact.summary_facts import is_summary_message
from core.config import Thresholds
from core.events import Event
from core.measure import CHARS_PER_TOKEN, Measured

Message = dict[str, Any]
SummaryText = Callable[[list[Message]], str | None]
LABEL = "Compacted"  # the course's summary layout, so a later summary folds this one in


def input_tokens(chars: int, chars_per_token: float, overhead_tokens: int) -> int:
    """A request's input tokens as a what-if run counts them."""
    return round(chars / chars_per_token) + overhead_tokens


def kept_from(messages: list[Message]) -> int:
    """Where the kept tail starts: the last assistant message (its results follow it).
    With no assistant message, the last message unless it holds results (0: nothing can
    be summarised without orphaning them)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return index
    last = len(messages) - 1
    content = messages[last].get("content") if messages else None
    holds_results = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return 0 if not messages or holds_results else last


def worth_summarising(replaced: list[Message]) -> bool:
    """Something new to summarise: not nothing, and not just an earlier summary."""
    return bool(replaced) and not (len(replaced) == 1 and is_summary_message(replaced[0]))


class ApiCompaction(FollowingCompactor):
    """Same interface as the s08 :class:`Compactor`; ``prepare`` compacts past the trigger."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset(),
                 trigger_tokens: int = 150_000,
                 chars_per_token: float = float(CHARS_PER_TOKEN), overhead_tokens: int = 0,
                 summary_text: SummaryText | None = None) -> None:
        super().__init__(workspace, thresholds, summarizer, emit, frozenset())
        if chars_per_token <= 0:
            raise ValueError(f"chars per token must be above 0, not {chars_per_token}")
        self.trigger_tokens = trigger_tokens
        self.chars_per_token = chars_per_token
        self.overhead_tokens = overhead_tokens
        self.summary_text = summary_text

    def tokens(self, chars: int) -> int:
        return input_tokens(chars, self.chars_per_token, self.overhead_tokens)

    async def prepare(self, messages: list[dict], active_request: str) -> list[dict]:
        """Over the trigger: the history before the latest turn becomes one summary."""
        await self.list_archive()
        history, _ = self.followed.follow(messages)  # only what was appended is measured
        if self.tokens(history.chars) > self.trigger_tokens:
            await self._compact(history, active_request)
        return self.followed.returned(history)

    async def _compact(self, history: Measured, active_request: str) -> None:
        messages = history.messages
        cut = kept_from(messages)
        replaced = messages[:cut]
        if not worth_summarising(replaced):
            return
        run = StageRun(API_COMPACTION, self.ctx, history)
        try:
            transcript = self.ctx.archive.write_transcript(replaced)  # nothing lost: saved first
            run.wrote(transcript)
            text = await self._summary(replaced, active_request)
        except BaseException:
            run.abandon()
            raise
        ledger_to_transcript(run, replaced, transcript)
        history.replace_all([summary_message(LABEL, active_request, text, transcript),
                             *messages[cut:]])
        run.changed = True
        run.finish()

    async def _summary(self, replaced: list[Message], active_request: str) -> str:
        """The caller's summary (a recorded agent's own) when it has one, else ours."""
        given = self.summary_text(replaced) if self.summary_text is not None else None
        if given is not None:
            return given
        limits = self.ctx.thresholds
        prepared = summary_input(replaced, limits.summary_input_limit, limits.summary_head,
                                 limits.summary_tail)
        return await self._summarizer().summarize(replaced, active_request, prepared)
