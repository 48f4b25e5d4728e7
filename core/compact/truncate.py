"""The ``truncate`` strategy: a pair-aware sliding window, the baseline s08 improves on.

It exists so the teaching lab can put the course's pipeline next to the simplest safe thing
one could do instead: when the history is over the context limit, keep the newest messages
that fit and drop the rest. It is *safe* — a tool_use is never separated from its results,
so the API never refuses the history — but it keeps nothing of what it drops: no summary, no
transcript, no tool-result file. Every tool result that falls out gets a ledger entry with
``"where": "lost"``, which is exactly what ``ctxlab compare`` counts against it.

The dropped part is replaced by one short user message, ``[N earlier messages dropped]``,
so the window may start with an assistant message and the count stays visible. It is a
marker, not a summary: the request and the facts in the dropped part are gone.

:class:`SlidingWindow` subclasses :class:`~core.compact.pipeline.Compactor` so the agent
uses either engine through the same calls (``prepare``, ``compact``, ``reactive``,
``call_with_recovery``); :func:`make_compactor` is how the agent picks one by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.archive.store import content_size
from core.compact.context import StageRun
from core.compact.managers import Manager, parse_manager
from core.compact.pipeline import Compactor
from core.compact.stages import SLIDING_WINDOW
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import Event
from core.measure import CHARS_PER_TOKEN, Measured, json_chars
from core.messages import blocks, has_tool_result, is_block

_DROPPED = re.compile(r"\[(\d+) earlier messages dropped\]")


def dropped_marker(count: int) -> dict[str, Any]:
    return {"role": "user", "content": f"[{count} earlier messages dropped]"}


_MARKER_CHARS = json_chars(dropped_marker(0)) - 1  # the marker without its count's digits


def dropped_before(messages: list[dict[str, Any]]) -> int:
    """How many messages earlier cuts dropped (read from a leading marker), else 0."""
    if not messages:
        return 0
    content = messages[0].get("content")
    match = _DROPPED.fullmatch(content) if isinstance(content, str) else None
    return int(match.group(1)) if match else 0


def safe_cut(messages: list[dict[str, Any]], cut: int) -> bool:
    """A window may start at ``cut`` unless that message carries tool results: they would
    answer a tool_use that is no longer there (an orphan the API refuses)."""
    return 0 < cut < len(messages) and not has_tool_result(messages[cut])


def window_start(messages: list[dict[str, Any]], limit: int,
                 sizes: list[int] | None = None) -> int:
    """The oldest safe cut whose window (marker included) fits ``limit`` chars.

    If even the newest safe cut does not fit (one tool batch bigger than the limit), the
    newest safe cut is used: a sliding window cannot shrink a message, only drop it.
    Returns 0 when there is no safe cut at all. ``sizes``: each message's JSON chars, when
    the caller measured them already.
    """
    sizes = sizes if sizes is not None else [json_chars(m) for m in messages]
    already = dropped_before(messages)
    newest = 0
    tail = 0  # sum of sizes[cut:]
    fits = 0
    for cut in range(len(messages) - 1, 0, -1):
        tail += sizes[cut]
        if not safe_cut(messages, cut):
            continue
        newest = newest or cut
        marker = _MARKER_CHARS + len(str(already + cut - (1 if already else 0)))
        count = len(messages) - cut + 1
        if 2 + marker + tail + 2 * (count - 1) <= limit:
            fits = cut
    return fits or newest


class SlidingWindow(Compactor):
    """The ``truncate`` engine: same interface as the s08 :class:`Compactor`, no archive."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset()) -> None:
        # The break switches disable s08 protections; this engine has none of them to break.
        super().__init__(workspace, thresholds, summarizer, emit, frozenset())

    async def prepare(self, messages: list[dict], active_request: str) -> list[dict]:
        """Over the context limit: keep the newest messages that fit, drop the rest."""
        await self.list_archive()  # what an earlier run archived is still there to open
        history = Measured(list(messages), self.sizes)  # only new messages are measured
        limit = self.ctx.thresholds.context_limit
        if history.chars > limit:
            self._cut(history, window_start(history.messages, limit, history.sizes))
        self.sizes.keep(history)
        return history.messages

    async def compact(self, messages: list[dict], active_request: str) -> list[dict]:
        """The ``compact`` tool: keep only the last ``reactive_keep`` messages."""
        return self._keep_tail(messages)

    async def reactive(self, messages: list[dict], active_request: str,
                       refusal: BaseException | None = None) -> list[dict]:
        """After a prompt-too-long error: keep only the last ``reactive_keep`` messages."""
        return self._keep_tail(messages)

    def _keep_tail(self, messages: list[dict]) -> list[dict]:
        history = Measured(list(messages))
        cut = max(0, len(messages) - self.ctx.thresholds.reactive_keep)
        while cut > 0 and not safe_cut(messages, cut):
            cut -= 1  # move back over the results to their tool_use: keep the pair whole
        self._cut(history, cut)
        return history.messages

    def _cut(self, history: Measured, cut: int) -> None:
        """Replace ``messages[:cut]`` by the marker; every result dropped is a loss."""
        messages = history.messages
        already = dropped_before(messages)
        if cut <= 0 or (already and cut == 1):
            return  # nothing to drop (only the marker itself would go)
        run = StageRun(SLIDING_WINDOW, self.ctx, history)  # every cut this engine makes
        for message in messages[:cut]:
            for block in blocks(message):
                if is_block(block, "tool_result"):
                    run.took(block.get("tool_use_id", ""),
                             content_size(block.get("content", "")), "lost")
        count = already + cut - (1 if already else 0)
        history.replace_all([dropped_marker(count), *messages[cut:]])
        run.changed = True
        run.finish()


def _engines() -> dict[Manager, type[Compactor]]:
    from core.compact.api_compaction import ApiCompaction
    from core.compact.clear_tool_uses import ApiClearToolUses
    from core.compact.observation_masking import ObservationMasking

    return {Manager.PIPELINE: Compactor, Manager.TRUNCATE: SlidingWindow,
            Manager.API_EDIT: ApiClearToolUses, Manager.API_COMPACT: ApiCompaction,
            Manager.OBSERVATION_MASKING: ObservationMasking}


# The managers ctxlab can run itself, each by its engine (the API's context editing and
# compaction played offline, observation masking), at each engine's defaults.
ENGINES: dict[Manager, type[Compactor]] = _engines()


def make_compactor(name: str, workspace: Path, thresholds: Thresholds | None = None,
                   summarizer: Summarizer | None = None,
                   emit: Callable[[Event], Any] | None = None,
                   breaks: frozenset[str] | set[str] = frozenset()) -> Compactor:
    """The engine of the manager called ``name`` (the pipeline, ``truncate``,
    ``api-edit`` or ``api-compact`` played offline, ``observation-masking``; an older name
    such as ``s08`` too)."""
    known = ", ".join(ENGINES)
    try:
        manager = parse_manager(name)
        engine = ENGINES[manager]
    except (KeyError, ValueError):
        raise ValueError(f"unknown compaction {name!r}; one of {known}") from None
    return engine(workspace, thresholds, summarizer, emit, breaks,
                  **run_scale(manager, thresholds or Thresholds()))


def run_scale(manager: Manager, thresholds: Thresholds) -> dict[str, Any]:
    """An engine's settings for a run at ``thresholds``: the API's compaction triggers at
    the run's context limit in tokens, as the offline context editing does, since a
    scenario's budget is far below the API's default trigger (which would never fire)."""
    if manager is Manager.API_COMPACT:
        return {"trigger_tokens": -(-thresholds.context_limit // CHARS_PER_TOKEN)}
    return {}
