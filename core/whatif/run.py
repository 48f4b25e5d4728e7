"""The runner: one recorded session walked once per strategy.

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
engines' events only ``stage`` events are looked at (:mod:`core.whatif.tally`).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.compact.summarizer import OfflineSummarizer
from core.measure import list_chars
from core.pricing import Price, load_prices
from core.sources.replay.model import Compaction, Exchange, Recording
from core.sources.replay.original import CLEARED, OriginalHistory, as_sent, ratio_fit
from core.usage import Usage, context_tokens
from core.whatif.cache import PrefixCache, request_tokens
from core.whatif.facts import Visibility, find_facts
from core.whatif.history import EngineHistory, MessageSizes, text_sizes
from core.whatif.lessons import lesson
from core.whatif.model import Fact, FactCheck, RequestCost, StrategyRun, WhatIf
from core.whatif.parallel import play_in_processes, pool_context, worker_count
from core.whatif.recoverable import ArchiveCheck, recorded_results
from core.whatif.strategies import (
    ORIGINAL,
    STRATEGIES,
    EngineSetup,
    RecordedSummaries,
    SessionShape,
    WhatIfOptions,
    checked_names,
    make_engine,
    session_shape,
    window_of,
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

    def tokens(self, chars: int) -> int:
        return request_tokens(chars, self.shape.ratio, self.shape.overhead_tokens)

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
            tally.compactions += 1
            _original_side_call(tally, step, before_chars)
            continue
        history.before_request(step)
        walk.add(step, history.messages, history.sizes, tally.take_stages(),
                 Usage.from_api(step.usage), text=text_sizes(history.sizes, history.media))
        history.after_reply(step)
    return StrategyRun(ORIGINAL, STRATEGIES[ORIGINAL], tuple(walk.rows), side=tally.side,
                       side_calls=tally.side_calls, compactions=tally.compactions,
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
                       side_calls=tally.side_calls, compactions=tally.compactions,
                       results_left=gone.left, results_recoverable=gone.recoverable,
                       facts=tuple(walk.checks), notes=(*notes, *tally.errors), error=error)


@contextmanager
def workdir_of(options: WhatIfOptions) -> Iterator[Path]:
    """Where the engines archive: the caller's folder (kept), else a temporary one
    (removed after)."""
    if options.workdir is not None:
        options.workdir.mkdir(parents=True, exist_ok=True)
        yield options.workdir
        return
    with tempfile.TemporaryDirectory(prefix="ctxlab-whatif-") as tmp:
        yield Path(tmp)


def measure(recording: Recording, options: WhatIfOptions) -> Session:
    """The session's ratio and fixed overhead (the fit's intercept, and the system prompt
    when the file records it: the fit counts its chars, so the intercept leaves it out)."""
    fit = ratio_fit(recording)
    overhead = fit.overhead_tokens
    if overhead is None:  # no intercept fitted: what the recorded requests carried beyond
        overhead = residual_overhead(recording, fit.ratio)  # their chars, typically
    overhead += round(len(recording.system) / fit.ratio)
    return Session(recording, session_shape(recording, fit.ratio, overhead), fit.source,
                   find_facts(recording), recorded_results(recording), options,
                   len(recording.exchanges), writes_billed(recording))


def writes_billed(recording: Recording) -> bool:
    """Does the recorded API bill cache writes? Anthropic's does (at a premium), OpenAI's
    does not (what is not read is plain input): a Claude model, or any recorded request that
    wrote to the cache, says the former."""
    model = (recording.model or "").lower()
    if model.startswith("claude"):
        return True
    for exchange in recording.exchanges:
        usage = Usage.from_api(exchange.usage)
        if usage is not None and (usage.cache_write_5m or usage.cache_write_1h):
            return True
    if model:  # a named model of another make that never wrote to a cache
        return False
    return recording.format not in OPENAI_FORMATS  # no name: Codex's rollouts are OpenAI's


OPENAI_FORMATS = frozenset({"codex"})


def residual_overhead(recording: Recording, ratio: float) -> int:
    """The median of what each recorded request counted beyond its history's chars at
    ``ratio`` (0 without usage). Used when the ratio fit has no intercept (a short session,
    or one whose counts do not follow its chars): without it every modelled strategy would
    leave out the system prompt and tools the recorded counts include, and look cheaper than
    the recording by exactly that."""
    system = len(recording.system)  # counted apart, as the fit counts it
    residuals = sorted(tokens - round((history.text_chars + system) / ratio)
                       for step, history in as_sent(recording)
                       if (tokens := context_tokens(step.usage)))
    return max(residuals[len(residuals) // 2], 0) if residuals else 0


def pricing(model: str | None) -> tuple[Price | None, str | None]:
    """The model's prices, else the table's reference model's (named, so nobody reads
    them as the recorded model's)."""
    table = load_prices()
    price = table.find(model) or table.reference
    return price, price.model if price is not None else None


def finish(runs: list[StrategyRun], price: Price | None,
           window: int) -> tuple[StrategyRun, ...]:
    """Costs, compactions and the requests past the window, then each strategy's lesson
    set against the recorded run."""
    priced = [counted(r, window) for r in runs]
    priced = [replace(r, cost=price.cost(r.billed)) if price is not None else r
              for r in priced]
    original = next((r for r in priced if r.name == ORIGINAL), None)
    return tuple(replace(r, lesson=lesson(r, original, window)) for r in priced)


def counted(run: StrategyRun, window: int) -> StrategyRun:
    """``compactions``: the requests before which the strategy changed the history (one
    request's several stages are one compaction, so the count is never above the requests;
    a change after the last request changed nothing that was sent); the
    requests over ``window``, which the API would have refused."""
    over = [r.index for r in run.requests if r.tokens > window]
    return replace(run, compactions=sum(1 for r in run.requests if r.stages),
                   over_window=len(over),
                   first_over_window=over[0] if over else None)


async def play_all(session: Session, names: tuple[str, ...], root: Path) -> list[StrategyRun]:
    """Every strategy of ``names``, in that order: side by side in processes
    (:mod:`core.whatif.parallel`) when that is worth it and possible, else one after the
    other here."""
    workers = worker_count(names, session.total, session.options.processes)
    context = pool_context() if workers > 1 else None
    if context is not None:
        return await play_in_processes(session, names, root, workers, context)
    runs: list[StrategyRun] = []
    for name in names:
        if name == ORIGINAL:
            runs.append(play_original(session))
        else:
            runs.append(await play_engine(session, name, root / name))
    return runs


async def compare_session_async(recording: Recording, options: WhatIfOptions) -> WhatIf:
    """Every strategy of ``options`` over ``recording``."""
    names = checked_names(options.strategies)
    session = measure(recording, options)
    with workdir_of(options) as root:
        runs = await play_all(session, names, root)
    price, price_model = pricing(recording.model)
    window = window_of(session.shape)
    return WhatIf(path=str(recording.path), format=recording.format, model=recording.model,
                  requests=session.total, chars_per_token=session.shape.ratio,
                  ratio_source=session.ratio_source, overhead_tokens=session.shape.overhead_tokens,
                  window_tokens=window, strategies=finish(runs, price, window),
                  price_model=price_model, summary_line=recording.summary_line(),
                  partial=recording.lines_read < recording.lines_total)


def compare_session(recording: Recording, options: WhatIfOptions) -> WhatIf:
    """:func:`compare_session_async` for callers without an event loop."""
    return asyncio.run(compare_session_async(recording, options))
