"""The runner: one recorded session walked once per strategy (:mod:`core.whatif.play`).

It measures what every strategy shares once — the session's chars-per-token ratio and fixed
overhead, whether its API bills cache writes, the facts it relied on — plays the strategies
(side by side in processes when that is worth it, :mod:`core.whatif.parallel`), then prices
them and sets each one's figures and lesson against the recorded run.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from core.pricing import Price, load_prices
from core.sources.replay.model import Recording
from core.sources.replay.original import as_sent, ratio_fit
from core.usage import Usage, context_tokens
from core.whatif.facts import find_facts
from core.whatif.lessons import lesson
from core.whatif.model import StrategyRun, WhatIf
from core.whatif.parallel import play_in_processes, pool_context, worker_count
from core.whatif.play import Session, play_engine, play_original
from core.whatif.recoverable import recorded_results
from core.whatif.strategies import (
    ORIGINAL,
    WhatIfOptions,
    checked_names,
    session_shape,
    window_of,
)


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
