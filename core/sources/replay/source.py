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

Controls are the source's (:mod:`core.sources`): pause, step, pace (requests per second at
speed ×1), play until a step that produced any stage event (either side's), and seek to a
request, back as well as forward. Every step's events are kept as they were emitted: a seek
back emits ``rewind`` and the stream again up to the position, and playing on re-emits what
was already played, so the pipeline (and a real summary call) runs once per step, whatever
the seeking.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from core.archive.atomic import atomic_write_text
from core.compact.pipeline import Compactor
from core.compact.summarizer import Summarizer
from core.config import Thresholds
from core.events import (
    AssistantText,
    Event,
    EventT,
    ModelRequest,
    ModelResponse,
    ReplayNotice,
    ReplayStart,
    ReplayStep,
    Rewind,
    RunStart,
    Stage,
    ToolCall,
    ToolResult,
    TurnStart,
)
from core.harness_paths import harness_dir
from core.measure import json_chars
from core.messages import blocks, is_block, message_text, tool_name
from core.sources import Capability, Source
from core.sources.replay import messages_json
from core.sources.replay.limits import LimitMode, Limits, resolve
from core.sources.replay.model import Compaction, Exchange, Message, Recording
from core.sources.replay.original import OriginalHistory, ratio_fit
from core.sources.replay.steps import merge_into
from core.usage import context_tokens

SUMMARY_DIR = Path(".replay/compactions")
SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
# Context a harness adds to a user message (Claude Code's attachments, its date note): sent
# to the model, counted in the history, but not what the person typed, so not shown as such.
REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.DOTALL)


@dataclass
class ReplayOptions:
    workdir: Path
    thresholds: Thresholds = field(default_factory=Thresholds)
    context_limit_tokens: int | None = None  # given: converted with the session's ratio
    # how ``thresholds`` become ctxlab's limits (core.sources.replay.limits): as given by
    # default here; ``ctxlab replay`` scales them to the model's window unless told not to
    limits: LimitMode = LimitMode.GIVEN
    explicit: frozenset[str] = frozenset()  # thresholds the user set: never scaled
    summarizer: Summarizer | None = None  # None: the offline summarizer
    speed: float = 0.0
    breaks: frozenset[str] = frozenset()
    # the workbench: at the end, wait (paused) for a seek back until finished, instead of
    # ending the run, so a learner can still go back to any request
    hold_at_end: bool = False
    # a person may seek (the workbench): every step's events are kept to show them again.
    # Headless, nobody seeks, and keeping them would hold the whole run in memory.
    seekable: bool = True
    # the workbench: the pipeline's heavy stages run in a worker thread so the UI keeps
    # drawing. Headless nothing draws, and the hop to the thread is only a cost.
    stages_in_thread: bool = True


def sample_history(requests: int = 6) -> list[Message]:
    """A small recorded session (a file listed, read, read again), for :meth:`sample`."""
    history: list[Message] = [{"role": "user", "content": "Find what logs the errors."}]
    for n in range(1, requests):
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "bash",
               "input": {"command": f"cat part{n}.log"}}
        history.append({"role": "assistant", "content": [use]})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}",
             "content": f"line {n}: ok\n" * 200}]})
    history.append({"role": "assistant", "content": "The errors come from part3.log."})
    return history


def effective_limits(options: ReplayOptions, ratio: float, recording: Recording) -> Limits:
    """The limits in force: scaled to the model's window or to a token limit (converted to
    chars at the session's ratio), or the thresholds as given."""
    seen = max((context_tokens(e.usage) or 0 for e in recording.exchanges), default=0)
    return resolve(options.thresholds, options.limits, ratio, model=recording.model,
                   tokens=options.context_limit_tokens, explicit=options.explicit, seen=seen,
                   recorded=recording.window_tokens)


def ctxlab_side(message: Message) -> Message:
    """A recorded message as ctxlab's history holds it: the agent's mid-history
    ``role: "system"`` notes (Claude Code's attachments for the models that take them)
    become user text, since ctxlab's history alternates user and assistant and its model
    calls take the system prompt apart. The original's history keeps them as sent."""
    return {**message, "role": "user"} if message.get("role") == "system" else message


class ReplaySource(Source):
    """Plays one :class:`Recording`; see the module docstring. It can pause, step, pace,
    play to the next stage and seek (back as well as forward), but takes no prompt."""

    capabilities = frozenset({Capability.PAUSE, Capability.STEP, Capability.PACE,
                              Capability.NEXT_STAGE, Capability.SEEK, Capability.CANCEL})
    step_period = 1.0  # one recorded request a second at speed ×1

    def __init__(self, recording: Recording, options: ReplayOptions) -> None:
        super().__init__()
        self.recording = recording
        self.name = recording.path.name
        self.options = options
        if options.hold_at_end:
            self.capabilities = self.capabilities | {Capability.FINISH}
        if not options.seekable:
            self.capabilities = self.capabilities - {Capability.SEEK}
        self.controls.set_speed(options.speed)  # requests per second (0: as fast as it can)
        fit = ratio_fit(recording)
        self.ratio, self.ratio_source = fit.ratio, fit.source
        self.overhead_tokens = fit.overhead_tokens
        self.limits = effective_limits(options, self.ratio, recording)
        self.thresholds = self.limits.thresholds
        self.original_history = OriginalHistory()
        self.history: list[Message] = []
        self.request = ""
        self.total = len(recording.exchanges)
        self.compactions = 0
        self.compactor: Compactor | None = None
        # What each played step emitted, in order (and what the run emitted after run_start,
        # before the first step): going back re-emits them, going forward again re-emits
        # what was already played, so a seek never runs the pipeline (or a summary) twice.
        self._opening: list[Event] = []
        self._played: list[tuple[int, list[Event]]] = []  # (requests shown after, events)
        self._log: list[Event] | None = None

    @classmethod
    def sample(cls, workdir: Path) -> Self:
        """A small Messages history under limits low enough that ctxlab's stages fire,
        held at its end as the workbench opens a replay."""
        path = workdir / "sample-history.json"
        recording = messages_json.load(path, json.dumps(sample_history()))
        return cls(recording, ReplayOptions(
            workdir=workdir, thresholds=Thresholds(context_limit=6_000, max_messages=8),
            hold_at_end=True))

    # -- running ------------------------------------------------------------------------

    def emit(self, event: EventT) -> EventT:
        if self._log is not None:
            self._log.append(event)
        return super().emit(event)

    async def open(self) -> RunStart:
        workdir = self.options.workdir
        workdir.mkdir(parents=True, exist_ok=True)  # the user's choice of place
        harness_dir(workdir, SUMMARY_DIR)  # ours: never through a link planted there
        self.compactor = Compactor(workdir, self.thresholds, self.options.summarizer,
                                   self.emit, self.options.breaks)
        self.compactor.stages_in_thread = self.options.stages_in_thread
        return RunStart(provider="replay", workspace=str(workdir), model=self.recording.model,
                        breaks=tuple(sorted(self.options.breaks)))

    async def play(self) -> None:
        """Every recorded step in order, through the gate; a seek back re-emits what was
        shown up to the position asked for (after a ``rewind`` event), and playing on
        re-emits steps already played before computing new ones."""
        self._log = self._opening
        self.emit(self.start_event())
        for notice in self.recording.notices:
            self.emit(ReplayNotice(kind=notice.kind, message=notice.message, line=notice.line))
        steps = self.recording.steps
        cursor = 0  # the next step to show
        while True:
            while cursor < len(steps):
                await self.controls.wait(self.turns)
                if self.controls.behind(self.turns):
                    cursor = self._rewind(self.controls.target or 0)
                    continue
                if cursor < len(self._played):
                    self._show_again(cursor)
                else:
                    await self._play_step(steps[cursor])
                cursor += 1
            if not self.options.hold_at_end:
                break
            await self.controls.hold(self.turns)
            if self.controls.finished:
                break
            cursor = self._rewind(self.controls.target or 0)
        self._log = None

    async def _play_step(self, step: Exchange | Compaction) -> None:
        events: list[Event] = []
        self._log = events if self.options.seekable else None
        if isinstance(step, Compaction):
            self._original_compaction(step)
        else:
            await self._exchange(step)
        if self.options.seekable:
            self._played.append((self.turns, events))
        self._log = None

    def _show_again(self, cursor: int) -> None:
        shown, events = self._played[cursor]
        for event in events:
            super().emit(event)
        self.turns = shown

    def _rewind(self, target: int) -> int:
        """Start the stream over and show it up to ``target`` requests; the next step's
        index. The events are the ones emitted the first time, so nothing is recomputed."""
        super().emit(Rewind(position=target))
        for event in self._opening:
            super().emit(event)
        self.turns = 0
        cursor = 0
        while self.turns < target and cursor < len(self._played):
            self._show_again(cursor)
            cursor += 1
        return cursor

    def start_event(self) -> ReplayStart:
        rec = self.recording
        return ReplayStart(
            format=rec.format, path=str(rec.path), agent=rec.agent,
            requests=len(rec.exchanges), compactions=len(rec.compactions),
            lines_read=rec.lines_read, lines_total=rec.lines_total, skipped=dict(rec.skipped),
            subagents=tuple(str(p) for p in rec.subagents),
            subagent_totals=tuple(s.to_json() for s in rec.subagents_read),
            chars_per_token=round(self.ratio, 3), ratio_source=self.ratio_source,
            overhead_tokens=self.overhead_tokens,
            unit="tokens" if self.limits.window_tokens is not None else "chars",
            context_limit=self.thresholds.context_limit,
            context_limit_tokens=self.limits.window_tokens,
            limits=self.limits.mode.value, max_messages=self.thresholds.max_messages,
            conversation=rec.conversation,
            conversations=tuple(dataclasses.asdict(c) for c in rec.conversations),
            side_calls=rec.side_calls)

    def _add(self, message: Message) -> None:
        """Append to ctxlab's history, merging same-role neighbours (roles must alternate)."""
        if self.history and self.history[-1].get("role") == message.get("role"):
            self.history[-1] = merge_into(self.history[-1], message.get("content"))
        else:
            self.history.append(message)

    def _input(self, messages: list[Message]) -> None:
        before = self.history[:]  # results are named from the history as the input came
        for message in messages:
            text = message_text(message) if message.get("role") == "user" else ""
            text = REMINDER.sub("", text)
            if text.strip() and not any(is_block(b, "tool_result") for b in blocks(message)):
                self.request = text
                self.emit(TurnStart(request=text))
            for block in blocks(message):
                if is_block(block, "tool_result"):
                    use_id = str(block.get("tool_use_id", ""))
                    self.emit(ToolResult(id=use_id, name=tool_name(before, use_id),
                                          chars=json_chars(block.get("content", "")),
                                          is_error=bool(block.get("is_error"))))
            self._add(ctxlab_side(message))

    async def _exchange(self, step: Exchange) -> None:
        assert self.compactor is not None
        self.turns += 1
        self._input(step.input)
        sent = await self.compactor.prepare_measured(self.history, self.request)
        self.history = sent.messages
        self.original_history.before_request(step)
        system = len(self.recording.system)
        original_chars = self.original_history.chars
        self.emit(ModelRequest(purpose="original", chars=original_chars,
                               est_tokens=int((original_chars + system) / self.ratio),
                               messages=len(self.original_history.messages),
                               system_chars=system,
                               sent=tuple(self.original_history.messages),
                               sent_sizes=tuple(self.original_history.sizes)))
        recorded = ModelResponse(purpose="original", stop_reason=step.stop_reason,
                                 usage=step.usage)
        self.emit(recorded)
        chars = sent.chars  # as prepare() measured it: never serialised again
        theirs = self.original_history
        categories, breakdown = theirs.step_categories(system)
        self.emit(ModelRequest(purpose="main", chars=chars, est_tokens=int(chars / self.ratio),
                               messages=len(self.history),
                               breakdown=self.compactor.categories.totals(self.history),
                               sent=tuple(self.history),
                               sent_sizes=tuple(sent.sizes)))
        self.emit(ReplayStep(
            index=self.turns, total=self.total,
            original_chars=original_chars, original_messages=len(theirs.messages),
            original_tokens=recorded.context_tokens,
            categories=categories, ctxlab_chars=chars,
            ctxlab_messages=len(self.history), timestamp=step.timestamp,
            breakdown=breakdown))
        theirs.after_reply(step)
        if step.reply is not None:
            self._reply(step.reply)

    def _reply(self, reply: Message) -> None:
        text = message_text(reply)
        if text:
            self.emit(AssistantText(delta=text))
        for block in blocks(reply):
            if is_block(block, "tool_use"):
                data = block.get("input") if isinstance(block.get("input"), dict) else {}
                self.emit(ToolCall(id=str(block.get("id", "")), name=str(block.get("name", "")),
                                    input=data))
        self._add(reply)

    def _original_compaction(self, step: Compaction) -> None:
        """The original agent's own compaction, as a stage of its own on the timeline."""
        self._input(step.input)
        theirs = self.original_history
        theirs.compact(step)
        before_chars, before_messages = theirs.chars, len(theirs.messages)
        theirs.after_compaction(step)
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
        self.emit(Stage(stage=step.stage, by=step.by, before_chars=before_chars,
                        after_chars=theirs.chars, before_messages=before_messages,
                        after_messages=len(theirs.messages), files=files,
                        trigger=step.trigger, pre_tokens=step.pre_tokens,
                        post_tokens=step.post_tokens, usage=step.usage))

