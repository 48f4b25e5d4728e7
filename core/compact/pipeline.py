"""``prepare()``: the staged pipeline that runs before every model call.

Order (the course's, as rows of :data:`core.compact.stages.TABLE`): ``tool_result_budget``
and ``snip_compact`` always run; above the trigger (50,000 chars) ``micro_compact`` runs
toward the target (40,000), then — only while still above the trigger —
``fit_tool_results``, then ``compact_history``. Each stage that changes something emits a
``stage`` event and ledger entries.

:class:`Compactor` also owns the two other ways to compact: reactive (after an overflow
error, see :meth:`Compactor.call_with_recovery`) and manual (the model's ``compact`` tool,
deferred to the end of its batch).

``context_notes`` (optional) returns facts the harness recorded outside the history — the
work log — and every summary this compactor makes is given them (see
:class:`~core.compact.summarizer.NotedSummarizer`), so no summary contradicts them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from core.archive.listing import archive_listing, holds_a_manifest
from core.archive.store import EARLIER_PREFIX, WRAPPER_HEAD, Archive, content_size
from core.compact.breakdown import BreakdownCache
from core.compact.budget import save_early
from core.compact.context import CompactContext, StageRun, finish_after
from core.compact.micro import micro_compact
from core.compact.reactive import is_overflow_error, reactive_compact
from core.compact.stages import (
    COMPACT_HISTORY,
    MANUAL_COMPACT,
    MICRO_COMPACT,
    REACTIVE_COMPACT,
    local_stages,
)
from core.compact.summarizer import NotedSummarizer, OfflineSummarizer, Summarizer
from core.compact.summary import compact_history
from core.config import Thresholds
from core.events import ArchiveListing, Event
from core.measure import Measured, SizeCache, text_length
from core.messages import Violation, iter_tool_results

COMPACT_TOOL_RESULT = "Compaction requested after this tool batch."
LIGHT_NEW_CHARS = 20_000  # new chars a call may bring and still run without a thread
# A history this short runs every local stage without a thread: snipping it (its
# transcript's lines are kept encoded between calls), micro-compacting and fitting it
# are each a pass over at most this much, a few milliseconds, where the thread costs more
# than it spares: a drawing loop and the thread share one interpreter lock, and a call
# handed over ran two to three times as long as inline.
LIGHT_HISTORY_CHARS = 1_000_000
# Past the trigger, micro and fit save about what lies above the target, a file per result:
# a call each turn sheds a result or two, but a history far past it (the limits lowered
# mid-run), or one whose excess is in many short results, may write hundreds of files,
# and that still goes to the thread (:func:`files_to_shed` estimates how many).
LIGHT_SHED_CHARS = 200_000
LIGHT_SHED_FILES = 64
INLINE_SAVE_CHARS = 2_000_000  # fresh results this long in all are saved without a thread

T = TypeVar("T")


def files_to_shed(messages: list[dict], short: int, shed: int, most: int) -> int:
    """About how many files micro-compaction writes to take ``shed`` chars out: results
    not behind a pointer yet and longer than ``short``, oldest first, each taking out its
    length less about a pointer's (``short``) — counted up to one past ``most``."""
    count = freed = 0
    for _, _, block in iter_tool_results(messages):
        if freed >= shed or count > most:
            break
        content = block.get("content", "")
        if isinstance(content, str) and content.startswith((EARLIER_PREFIX, WRAPPER_HEAD)):
            continue
        size = content_size(content)
        if size > short:
            count += 1
            freed += size - short
    return count


class Compactor:
    """The compaction engine of one workspace."""

    def __init__(self, workspace: Path, thresholds: Thresholds | None = None,
                 summarizer: Summarizer | None = None,
                 emit: Callable[[Event], Any] | None = None,
                 breaks: frozenset[str] | set[str] = frozenset(),
                 context_notes: Callable[[], str] | None = None) -> None:
        emit = emit or (lambda event: event)
        self.ctx = CompactContext(
            archive=Archive(workspace, emit=emit),
            thresholds=thresholds or Thresholds(),
            emit=emit,
            breaks=frozenset(breaks),
        )
        self.summarizer = summarizer or OfflineSummarizer()
        self.context_notes = context_notes
        self.reactive_retries = 0
        # sizes of the last history sent: the next call measures only what was added
        self.sizes = SizeCache()
        # the history sent, by category, for the request events (each message split once)
        self.categories = BreakdownCache()
        self._listed = False  # archive_listing said (or had nothing to say)
        # Heavy stages go to a worker thread so an event loop that draws a UI keeps drawing;
        # a caller whose loop draws nothing (a headless replay) sets this and saves the hop.
        self.stages_in_thread = True

    def _summarizer(self) -> Summarizer:
        """The summarizer for one summary, given the notes when there is a notes source
        (wrapped per call, so replacing ``self.summarizer`` keeps the notes)."""
        if self.context_notes is None:
            return self.summarizer
        return NotedSummarizer(self.summarizer, self.context_notes)

    @property
    def archive(self) -> Archive:
        return self.ctx.archive

    @property
    def thresholds(self) -> Thresholds:
        return self.ctx.thresholds

    @thresholds.setter
    def thresholds(self, value: Thresholds) -> None:
        self.ctx.thresholds = value

    @property
    def ledger(self) -> list[dict[str, Any]]:
        return self.ctx.archive.ledger

    async def list_archive(self) -> None:
        """Say once what the workspace's archive already holds (a resumed session, a
        scenario run again in the same workspace), before this compactor's first stage, so
        a front end lists it from the event instead of reading the folders. At first use,
        not when made: whoever makes the compactor, the listing follows ``run_start``. In a
        worker thread, as the stages run: a long-lived archive lists 50,000 files."""
        if self._listed:
            return
        self._listed = True
        if not holds_a_manifest(self.archive):  # a fresh workspace: no thread for nothing
            return
        try:
            files = await asyncio.to_thread(archive_listing, self.archive)
        except OSError:  # a folder the archive refuses: its first write will say so
            return
        if files:
            self.ctx.emit(ArchiveListing(files=files))

    def violation_stage(self, violation: Violation) -> str | None:
        """The stage that introduced an API violation (only a break switch can)."""
        return self.ctx.violation_stage(violation)

    async def prepare(self, messages: list[dict], active_request: str) -> list[dict]:
        """Return the history to send; ``messages`` itself is never mutated.

        The synchronous stages (measuring, hashing and saving results: tens of milliseconds
        for a 10 MB result) run in a worker thread so an event loop driving a UI keeps
        drawing (unless :attr:`stages_in_thread` is off, or the call is light: see
        :meth:`_light`); their events are emitted from that thread. The summary, a model
        call, runs back on the loop.
        """
        return (await self.prepare_measured(messages, active_request)).messages

    async def prepare_measured(self, messages: list[dict], active_request: str) -> Measured:
        """:meth:`prepare`, with the sizes it measured: a caller reporting the history's
        length reads it here instead of serialising the whole history again."""
        await self.list_archive()
        if not self.stages_in_thread or self._light(messages):
            history = self.prepare_local(messages)
        else:
            history = await asyncio.to_thread(self.prepare_local, messages)
        if history.chars > self.ctx.thresholds.context_limit:
            run = StageRun(COMPACT_HISTORY, self.ctx, history)
            await finish_after(run, compact_history(run, self._summarizer(), active_request))
            self.sizes.keep(history)
        return history

    def sizes_of(self, messages: list[dict]) -> tuple[int, ...]:
        """Each message's JSON chars, as the last ``prepare()`` measured them (a message it
        never saw is measured now)."""
        return tuple(self.sizes.size(message) for message in messages)

    def _light(self, messages: list[dict]) -> bool:
        """Is this call's work small enough to run inline? Most turns add a message or two
        to a history measured last time. Light means: nothing new a budget could persist
        (under ``LIGHT_NEW_CHARS``, or a small save: see :meth:`_small_save`), and a
        history the stages can walk within a frame (``LIGHT_HISTORY_CHARS``; past the
        trigger, with at most ``LIGHT_SHED_CHARS`` above the target, to be saved in at
        most ``LIGHT_SHED_FILES`` files) or too short for any stage to act (few
        messages, under the trigger). A long session snips at every turn and, past the
        trigger, micro-compacts at every turn: a replay's calls are nearly all such, and
        handing each to a thread tripled their cost."""
        limits = self.ctx.thresholds
        if self.ctx.breaks:
            return False
        total = self.sizes.light_total(messages, min(LIGHT_NEW_CHARS, limits.large_result))
        if total is None:
            return self._small_save(messages)
        if total <= limits.context_limit:
            return total <= LIGHT_HISTORY_CHARS or len(messages) <= limits.max_messages
        shed = total - limits.target
        return total <= LIGHT_HISTORY_CHARS and shed <= LIGHT_SHED_CHARS and \
            files_to_shed(messages, limits.micro_short, shed, LIGHT_SHED_FILES) \
            <= LIGHT_SHED_FILES

    def _small_save(self, messages: list[dict]) -> bool:
        """Is the call's only new weight its last message, of at most
        ``INLINE_SAVE_CHARS`` of text (a fresh result or two to save), after a light
        history under the trigger that no snip touches? Saving that much is one streamed
        pass, well inside a frame, and the hop to a worker thread and back would add a
        sizeable share to it."""
        limits = self.ctx.thresholds
        if not messages or text_length(messages[-1]) > INLINE_SAVE_CHARS:
            return False
        head = self.sizes.light_total(messages[:-1], min(LIGHT_NEW_CHARS, limits.large_result))
        return head is not None and head <= limits.context_limit and \
            len(messages) <= limits.max_messages

    def prepare_local(self, messages: list[dict]) -> Measured:
        """Every stage before the summary, in the course's order (no model call)."""
        self.ctx.archive.open_stage()  # no tool runs until it returns: its folders checked once
        try:
            save_early(messages, self.ctx)  # big fresh results: saved in the pass measuring them
            history = Measured(list(messages), self.sizes)
            limits = self.ctx.thresholds
            if self.ctx.broken("stage-order") and history.chars > limits.context_limit:
                micro_compact(StageRun(MICRO_COMPACT, self.ctx, history), limits.target).finish()
            for spec in local_stages():
                if spec.over_limit_only and history.chars <= limits.context_limit:
                    continue
                assert spec.run is not None
                spec.run(StageRun(spec, self.ctx, history)).finish()
        finally:
            self.ctx.archive.drop_early()
            self.ctx.archive.end_stage()  # a stage that raised ends here, not at its flush
        self.sizes.keep(history)
        return history

    async def compact(self, messages: list[dict], active_request: str) -> list[dict]:
        """Summarise now (the ``compact`` tool, after its batch's results are appended)."""
        await self.list_archive()
        history = Measured(list(messages))
        run = StageRun(MANUAL_COMPACT, self.ctx, history)
        await finish_after(run, compact_history(run, self._summarizer(), active_request))
        return history.messages

    async def reactive(self, messages: list[dict], active_request: str,
                       refusal: BaseException | None = None) -> list[dict]:
        """Reactive compaction after ``refusal`` (the overflow error), which its stage event
        quotes, saying whether a scenario scripted it."""
        history = Measured(list(messages))
        stage = StageRun(REACTIVE_COMPACT, self.ctx, history)
        if refusal is not None:
            stage.refusal = str(refusal)
            stage.refusal_scripted = bool(getattr(refusal, "scripted", False))
        await finish_after(stage, reactive_compact(stage, self._summarizer(), active_request))
        return history.messages

    async def call_with_recovery(
        self,
        messages: list[dict],
        active_request: str,
        send: Callable[[list[dict]], Awaitable[T]],
    ) -> tuple[list[dict], T]:
        """prepare → send; on an overflow error, reactive-compact once and try again.

        Returns the history as it was sent (the caller adopts it) and the reply. The retry
        counter resets after every successful call, so each failing streak gets one recovery.
        """
        while True:
            prepared = await self.prepare(messages, active_request)
            try:
                reply = await send(prepared)
            except Exception as error:
                if not is_overflow_error(error) or \
                        self.reactive_retries >= self.ctx.thresholds.max_reactive_retries:
                    self.reactive_retries = 0  # the streak ends here; the next call starts fresh
                    raise
                self.reactive_retries += 1
                try:
                    messages = await self.reactive(prepared, active_request, error)
                except BaseException:
                    self.reactive_retries = 0  # a failed recovery ends the streak too
                    raise
                continue
            self.reactive_retries = 0
            return prepared, reply
