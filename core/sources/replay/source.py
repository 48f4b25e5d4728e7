"""``ReplaySource``: a recorded session played request by request beside ctxlab's pipeline.

It is an event source: ``await source.run(emit)`` drives it until the recording ends (or
the task is cancelled), and the same typed events as a live run come out. For each recorded
request it emits what the original agent sent (``model_request``/``model_response`` with
purpose ``original`` and the recorded ``usage``) and, beside it, what ctxlab would have
sent: the history ctxlab keeps from the start (the same new input, the same replies) goes
through :meth:`Compactor.prepare` with its own archive in the replay workdir, so its
``stage`` events and ledger are exactly those of a live run, followed by a ``main``
``model_request``. A ``replay_step`` event puts both sides' sizes together. The original's
own compaction is a ``stage`` event with ``by`` set to the agent (``claude-code``,
``codex``), its trigger and pre-compaction tokens, and its summary saved as a file.

Controls: :meth:`pause`, :meth:`resume`, :meth:`step`, :meth:`next_compaction` (run until
a step that produced any stage event, either side's) and :attr:`speed` (requests per
second; 0 plays as fast as it can).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import sources as source
from core.archive.atomic import atomic_write_text
from core.compact.pipeline import Compactor
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import (
    AssistantText,
    Error,
    Event,
    ModelRequest,
    ModelResponse,
    ReplayNotice,
    ReplayStart,
    ReplayStep,
    RunEnd,
    RunStart,
    Stage,
    ToolCall,
    ToolResult,
    TurnStart,
)
from core.harness_paths import harness_dir
from core.measure import json_chars
from core.messages import blocks, is_block, message_text, tool_names
from core.providers.base import ProviderError
from core.sources.replay.model import MAX_STEP_WAIT, Compaction, Exchange, Message, Recording
from core.sources.replay.original import OriginalHistory, chars_per_token
from core.sources.replay.steps import merge_into

SUMMARY_DIR = Path(".replay/compactions")
SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class ReplayOptions:
    workdir: Path
    thresholds: Thresholds = field(default_factory=Thresholds)
    context_limit_tokens: int | None = None  # given: converted with the session's ratio
    summarizer: Summarizer | None = None  # None: the offline summarizer
    speed: float = 0.0
    breaks: frozenset[str] = frozenset()


def effective_thresholds(options: ReplayOptions, ratio: float) -> Thresholds:
    """The thresholds in force: a token limit becomes chars at the session's ratio."""
    if options.context_limit_tokens is None:
        return options.thresholds
    return options.thresholds.replace(
        context_limit=max(int(options.context_limit_tokens * ratio), 1))


class ReplaySource:
    """Plays one :class:`Recording`; see the module docstring. An event source
    (:mod:`core.sources`): it can pause, step and be cancelled, but takes no prompt."""

    kind = "replay"
    capabilities = frozenset({source.PAUSE, source.STEP, source.CANCEL, source.NEXT_STAGE})

    def __init__(self, recording: Recording, options: ReplayOptions) -> None:
        self.recording = recording
        self.name = recording.path.name
        self.options = options
        self.speed = options.speed
        self.ratio, self.ratio_source = chars_per_token(recording)
        self.thresholds = effective_thresholds(options, self.ratio)
        self.paused = False
        self._budget = 0
        self._to_stage = False
        self._wake = asyncio.Event()
        self._sleep = asyncio.sleep  # the pace between requests (replaceable in tests)
        self._staged = False
        self.original = OriginalHistory()
        self.history: list[Message] = []
        self.request = ""
        self.index = 0
        self.total = len(recording.exchanges)
        self.compactions = 0
        self.compactor: Compactor | None = None
        self._emit: Callable[[Event], Any] = lambda event: event

    # -- controls -----------------------------------------------------------------------

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._to_stage = False
        self._wake.set()

    @property
    def seeking(self) -> bool:
        """A :meth:`next_compaction` is under way: the step holding the stage has not ended."""
        return self._to_stage

    def step(self, count: int = 1) -> None:
        """Play ``count`` more steps (a request, or the original's compaction), then pause."""
        self.paused = True
        self._budget += count
        self._wake.set()

    def next_compaction(self) -> None:
        """Play until a step with a stage event (the original's or ctxlab's), then pause."""
        self.paused = True
        self._to_stage = True
        self._wake.set()

    async def _wait(self) -> None:
        while self.paused and not self._budget and not self._to_stage:
            self._wake.clear()
            await self._wake.wait()
        if self.paused and self._budget:
            self._budget -= 1
        if self.speed > 0:  # a speed set from outside still never waits past the bound
            await self._sleep(min(1 / self.speed, MAX_STEP_WAIT))

    # -- running ------------------------------------------------------------------------

    def _observe(self, event: Event) -> Any:
        if isinstance(event, Stage):
            self._staged = True
        return self._emit(event)

    async def run(self, emit: Callable[[Event], Any]) -> bool:
        """Replay everything; True when the recording was played to its end."""
        self._emit = emit
        workdir = self.options.workdir
        workdir.mkdir(parents=True, exist_ok=True)  # the user's choice of place
        self.compactor = Compactor(workdir, self.thresholds, self.options.summarizer,
                                   self._observe, self.options.breaks)
        ok = False
        try:
            emit(RunStart(provider="replay", workspace=str(workdir),
                          model=self.recording.model, breaks=tuple(sorted(self.options.breaks))))
            emit(self.start_event())
            harness_dir(workdir, SUMMARY_DIR)  # ours: never through a link planted there
            for notice in self.recording.notices:
                emit(ReplayNotice(kind=notice.kind, message=notice.message, line=notice.line))
            for step in self.recording.steps:
                await self._wait()
                self._staged = False
                if isinstance(step, Compaction):
                    self._original_compaction(step)
                else:
                    await self._exchange(step)
                if self._to_stage and self._staged:
                    self._to_stage = False
            ok = True
        except asyncio.CancelledError:
            emit(Error(message="replay cancelled", kind="cancelled"))
            raise
        except ProviderError as exc:  # a real summary failed (--provider anthropic)
            emit(Error(message=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                       kind=exc.kind))
        except (OSError, ValueError) as exc:
            emit(Error(message=str(exc), kind=type(exc).__name__))
        finally:
            emit(RunEnd(ok=ok, turns=self.index))
        return ok

    def start_event(self) -> ReplayStart:
        rec = self.recording
        return ReplayStart(
            format=rec.format, path=str(rec.path), agent=rec.agent,
            requests=len(rec.exchanges), compactions=len(rec.compactions),
            lines_read=rec.lines_read, lines_total=rec.lines_total, skipped=dict(rec.skipped),
            subagents=tuple(str(p) for p in rec.subagents),
            chars_per_token=round(self.ratio, 3), ratio_source=self.ratio_source,
            unit="tokens" if self.options.context_limit_tokens is not None else "chars",
            context_limit=self.thresholds.context_limit,
            context_limit_tokens=self.options.context_limit_tokens)

    def _add(self, message: Message) -> None:
        """Append to ctxlab's history, merging same-role neighbours (roles must alternate)."""
        if self.history and self.history[-1].get("role") == message.get("role"):
            self.history[-1] = merge_into(self.history[-1], message.get("content"))
        else:
            self.history.append(message)

    def _input(self, messages: list[Message]) -> None:
        names = tool_names(self.history)
        for message in messages:
            text = message_text(message) if message.get("role") == "user" else ""
            if text.strip() and not any(is_block(b, "tool_result") for b in blocks(message)):
                self.request = text
                self._emit(TurnStart(request=text))
            for block in blocks(message):
                if is_block(block, "tool_result"):
                    use_id = str(block.get("tool_use_id", ""))
                    self._emit(ToolResult(id=use_id, name=names.get(use_id, ""),
                                          chars=json_chars(block.get("content", "")),
                                          is_error=bool(block.get("is_error"))))
            self._add(message)

    async def _exchange(self, step: Exchange) -> None:
        assert self.compactor is not None
        self.index += 1
        self._input(step.input)
        self.history = await self.compactor.prepare(self.history, self.request)
        self.original.before_request(step)
        system = len(self.recording.system)
        original_chars = self.original.chars
        self._emit(ModelRequest(purpose="original", chars=original_chars,
                                est_tokens=int((original_chars + system) / self.ratio),
                                messages=len(self.original.messages), system_chars=system))
        recorded = ModelResponse(purpose="original", stop_reason=step.stop_reason,
                                 usage=step.usage)
        self._emit(recorded)
        chars = json_chars(self.history)
        self._emit(ModelRequest(purpose="main", chars=chars, est_tokens=int(chars / self.ratio),
                                messages=len(self.history),
                                breakdown=self.compactor.categories.totals(self.history)))
        self._emit(ReplayStep(
            index=self.index, total=self.total,
            original_chars=original_chars, original_messages=len(self.original.messages),
            original_tokens=recorded.context_tokens,
            categories=self.original.category_chars(), ctxlab_chars=chars,
            ctxlab_messages=len(self.history), timestamp=step.timestamp,
            breakdown=self.original.breakdown(system)))
        self.original.after_reply(step)
        if step.reply is not None:
            self._reply(step.reply)

    def _reply(self, reply: Message) -> None:
        text = message_text(reply)
        if text:
            self._emit(AssistantText(delta=text))
        for block in blocks(reply):
            if is_block(block, "tool_use"):
                data = block.get("input") if isinstance(block.get("input"), dict) else {}
                self._emit(ToolCall(id=str(block.get("id", "")), name=str(block.get("name", "")),
                                    input=data))
        self._add(reply)

    def _original_compaction(self, step: Compaction) -> None:
        """The original agent's own compaction, as a stage of its own on the timeline."""
        self._input(step.input)
        self.original.compact(step)
        before_chars, before_messages = self.original.chars, len(self.original.messages)
        self.original.after_compaction(step)
        files: tuple[str, ...] = ()
        self.compactions += 1
        if step.summary:
            name = SAFE_NAME.sub("_", f"{step.by}-{step.stage}")[:64]  # never a path
            rel = SUMMARY_DIR / f"{self.compactions:03d}-{name}.md"
            # a lone surrogate the recording spelt as a JSON escape stays an escape: the
            # file is UTF-8 and the replay goes on
            atomic_write_text(self.options.workdir / rel, step.summary + "\n",
                              errors="backslashreplace")
            files = (rel.as_posix(),)
        self._observe(Stage(stage=step.stage, by=step.by, before_chars=before_chars,
                            after_chars=self.original.chars, before_messages=before_messages,
                            after_messages=len(self.original.messages), files=files,
                            trigger=step.trigger, pre_tokens=step.pre_tokens))

