"""One strategy played over a recorded session: the walk every strategy shares.

The trajectory is the recording's: every strategy is given the same new input and the same
replies at every step, and decides only what would have been sent at each request. For
``original`` that is the agent's own history as it sent it, with the recorded ``usage`` where
the file has one; for every other strategy it is what its engine's ``prepare`` returns. Each
request then gets the same treatment: its JSON chars, tokens at the session's measured ratio
plus the fixed overhead every request carried, the prefix-cache split
(:mod:`core.whatif.cache`), the recorded output tokens, and the facts the session relied on
at that request checked against what was sent (:mod:`core.whatif.facts`).

Nothing of a history is copied per request: the cache model keeps the previous request's
list (the messages themselves are shared), sizes are measured once per message, and of the
engines' events only ``stage`` events are looked at (:mod:`core.whatif.tally`). A strategy's
walk needs nothing but the :class:`Session`, so it runs the same in this process or in a
worker of :mod:`core.whatif.parallel`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.compact.summarizer import OfflineSummarizer
from core.measure import list_chars
from core.sources.replay.model import Compaction, Exchange, Recording
from core.sources.replay.original import CLEARED, OriginalHistory
from core.usage import Usage
from core.whatif.cache import PrefixCache
from core.whatif.facts import Visibility
from core.whatif.history import EngineHistory, MessageSizes, text_sizes
from core.whatif.model import Fact, FactCheck, RequestCost, StrategyRun
from core.whatif.recoverable import ArchiveCheck
from core.whatif.strategies import (
    ORIGINAL,
    STRATEGIES,
    EngineSetup,
    RecordedSummaries,
    SessionShape,
    WhatIfOptions,
    make_engine,
)
from core.whatif.tally import Tally, WatchedSummarizer


@dataclass
class Session:
    """What every strategy's walk shares: the recording and what was measured of it."""

    recording: Recording
    shape: SessionShape
    ratio_source: str  # "usage" (fitted) or "estimate"
    facts: list[Fact]
    originals: dict[str, Any]
    options: WhatIfOptions
    total: int  # recorded requests
    writes_billed: bool = True  # the API bills cache writes (Anthropic's does, OpenAI's not)

    def progress(self, name: str, index: int) -> None:
        if self.options.progress is not None:
            self.options.progress(name, index, self.total)


@dataclass
class Requests:
    """One strategy's per-request rows as they are walked."""

    session: Session
    name: str
    cache: PrefixCache
    visibility: Visibility
    rows: list[RequestCost]
    checks: list[FactCheck]

    @classmethod
    def start(cls, session: Session, name: str) -> Requests:
        shape = session.shape
        return cls(session, name, PrefixCache(shape.ratio, shape.overhead_tokens),
                   Visibility(session.facts), [], [])

    def add(self, step: Exchange, sent: list[dict[str, Any]], sizes: list[int],
            stages: tuple[str, ...], recorded: Usage | None = None,
            text: list[int] | None = None) -> None:
        """Request ``len(rows) + 1``, sent as ``sent`` (``sizes``: each message's chars;
        ``text``: the same without base64 media, which is what becomes tokens);
        ``recorded``: the API's own usage (the original's), used as it is instead of the
        model."""
        index = len(self.rows) + 1
        chars = list_chars(sizes)
        split = self.cache.observe(sent, step.timestamp, sizes if text is None else text)
        output = recorded_output(step)
        if recorded is not None:
            usage = Usage(recorded.input, recorded.cache_write_5m, recorded.cache_write_1h,
                          recorded.cache_read, recorded.output)
            tokens = recorded.context_tokens
        elif self.session.writes_billed:
            usage = Usage(cache_write_5m=split.write, cache_read=split.read, output=output)
            tokens = split.read + split.write
        else:  # no cache writes where the API bills none (OpenAI): plain input instead
            usage = Usage(input=split.write, cache_read=split.read, output=output)
            tokens = split.read + split.write
        self.rows.append(RequestCost(index, chars, tokens, usage, step.timestamp, stages,
                                     counted=recorded is not None))
        self.checks.extend(self.visibility.check(index, sent))
        self.session.progress(self.name, index)


def recorded_output(step: Exchange) -> int:
    usage = Usage.from_api(step.usage)
    return usage.output if usage is not None else 0


def live_results(messages: list[dict[str, Any]]) -> set[str]:
    """The tool results a history still shows (a cleared one no longer does)."""
    return {str(b.get("tool_use_id", "")) for m in messages
            if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
            and b.get("content") != CLEARED}


def play_original(session: Session) -> StrategyRun:
    """The recording as the agent sent it: its compactions are its own, its summaries its
    side calls (the recorded usage when the file has it, else modelled like ctxlab's).
    What they removed is recoverable when the context the agent kept points to a file that
    holds it (Claude Code's summary names its transcript: the recording read here), not
    when nothing in the context says where it went (a cleared result, a Codex compaction)."""
    walk = Requests.start(session, ORIGINAL)
    tally = Tally(session.shape.ratio)
    history = OriginalHistory()
    left: set[str] = set()
    recoverable: set[str] = set()
    for step in session.recording.steps:
        if isinstance(step, Compaction):
            history.compact(step)
            before, before_chars = live_results(history.messages), history.chars
            history.after_compaction(step)
            gone = before - live_results(history.messages)
            left |= gone
            if step.cleared is None and TRANSCRIPT_POINTER.search(
                    step.summary + json.dumps(step.kept, ensure_ascii=False)):
                recoverable |= gone
            tally.pending.append(step.stage)
            _original_side_call(tally, step, before_chars)
            continue
        history.before_request(step)
        walk.add(step, history.messages, history.sizes, tally.take_stages(),
                 Usage.from_api(step.usage), text=text_sizes(history.sizes, history.media))
        history.after_reply(step)
    return StrategyRun(ORIGINAL, STRATEGIES[ORIGINAL], tuple(walk.rows), side=tally.side,
                       side_calls=tally.side_calls,
                       results_left=len(left), results_recoverable=len(recoverable & left),
                       facts=tuple(walk.checks),
                       notes=("tokens and cache as the recorded usage says, where it has "
                              "one",))


# Claude Code's summary: "…read the full transcript at: /home/…/<session>.jsonl"
TRANSCRIPT_POINTER = re.compile(r"full transcript at: \S+\.jsonl")


def _original_side_call(tally: Tally, step: Compaction, before_chars: int) -> None:
    recorded = Usage.from_api(step.usage)
    if recorded is not None:
        tally.side = tally.side + recorded
        tally.side_calls += 1
    elif step.cleared is None and step.summary:
        tally.summary(before_chars, len(step.summary))


async def play_engine(session: Session, name: str, workspace: Path) -> StrategyRun:
    """The recording under one of ctxlab's engines, in its own workspace."""
    tally = Tally(session.shape.ratio)
    summaries = RecordedSummaries.of(session.recording, tally.watch)
    setup = EngineSetup(workspace, session.shape, session.options,
                        WatchedSummarizer(OfflineSummarizer(), tally.watch,
                                          whole_history=name == "api-compaction"), tally, summaries)
    engine, notes = make_engine(name, setup)
    walk = Requests.start(session, name)
    history = EngineHistory()
    sizes = MessageSizes()
    error: str | None = None
    try:
        for position, step in enumerate(session.recording.steps):
            history.take(step.input)
            if isinstance(step, Compaction):
                continue
            summaries.position = position
            history.messages = await engine.prepare(history.messages, history.request)
            walk.add(step, history.messages, sizes.of(history.messages), tally.take_stages(),
                     text=sizes.text)
            if step.reply is not None:
                history.add(step.reply)
    except Exception as exc:  # one strategy's failure is reported, the others still run
        error = f"{type(exc).__name__}: {exc}"
    gone = ArchiveCheck(engine.archive, session.originals).departures(tally.ledger)
    return StrategyRun(name, STRATEGIES[name], tuple(walk.rows), side=tally.side,
                       side_calls=tally.side_calls,
                       results_left=gone.left, results_recoverable=gone.recoverable,
                       facts=tuple(walk.checks), notes=(*notes, *tally.errors), error=error)
