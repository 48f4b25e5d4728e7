"""Strategy comparison (teaching lab): one scenario, several ways to keep the context small.

A learner who has watched the s08 pipeline work still has to ask "compared to what?". This
module answers with numbers: it plays the same scripted scenario once per strategy, each in
a fresh temporary copy of the sample workspace, and reports what each one cost and what each
one kept:

* ``calls``, ``peak_chars``, ``mean_chars`` — main model calls and the contract's size
  measure (chars of the messages sent) per call: what the context costs
  (``mean_system_chars`` beside it: recalled memory is sent in the system prompt);
* ``side_calls`` — side work (summaries, memory selections, extractions, consolidations),
  counted once per operation whether a model or the offline implementation answered it
  (:func:`side_work`): what the strategy spends to keep the context small;
* ``losses`` — ledger entries with ``"where": "lost"``: tool output that left the context and
  exists nowhere else;
* ``billed_input_tokens``, ``cache_read_share``, ``est_cost`` — what the input would be billed
  with ctxlab's prompt-cache breakpoints (estimated per call,
  :mod:`core.sources.agent.cache_estimate`):
  tokens in all, the share read back from the cache, and its price for the price table's
  reference model (:mod:`core.pricing`) — a compaction that rewrites the front of the
  history shows here as cache writes;
* ``probes`` — the scenario's probe questions (facts stated early), each marked answerable
  when its expected answer is visible in what the next main call would send after its turn
  (system prompt + messages); the runner judges them (``probe`` events).

Strategies are rows of :data:`STRATEGIES`; each one names the manager it plays (the one
vocabulary of :mod:`core.compact.managers`: who keeps the context small) and otherwise only
sets :class:`~core.sources.agent.options.RunOptions` fields, so a new strategy (say, pinned
project rules) is one more row. Everything returned
is a plain dataclass, so the workbench can draw the same numbers as ``ctxlab compare``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compact.managers import Manager
from core.compact.stages import summary_stages
from core.config import Thresholds
from core.events import (
    Emitter,
    Error,
    Event,
    MemoryConsolidated,
    MemoryConsolidationFailed,
    MemorySelected,
    ModelRequest,
    ProbeChecked,
    Recorder,
    Stage,
    TurnEnd,
    TurnStart,
)
from core.pricing import Price, load_prices
from core.scenarios.model import Scenario
from core.sources.agent.session import AgentSession, RunOptions
from core.usage import Usage
from core.wording import plural


@dataclass(frozen=True)
class Strategy:
    """A named way to manage the context: the manager that keeps it small, and the other
    RunOptions fields it sets (memory, pinned context), nothing else."""

    name: str
    manager: Manager
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)


def _table(*rows: Strategy) -> dict[str, Strategy]:
    return {row.name: row for row in rows}


# One row per strategy: its name on the command line, the manager it plays, what a learner
# reads, and RunOptions fields (a typo fails loudly at run time).
STRATEGIES: dict[str, Strategy] = _table(
    Strategy("truncate", Manager.TRUNCATE,
             "sliding window: keep the newest messages that fit, drop the rest",
             {"memory": False, "pinned": False}),
    Strategy("compact", Manager.PIPELINE,
             "the s08 pipeline (budget, snip, micro, fit, summary), memory off",
             {"memory": False, "pinned": False}),
    Strategy("compact+memory", Manager.PIPELINE,
             "s08 compaction + s09 long-term memory (the course)",
             {"memory": True, "pinned": False}),
    Strategy("compact+memory+pinned", Manager.PIPELINE,
             "s08 + s09 + project rules and a work log pinned in every system prompt",
             {"memory": True, "pinned": True}),
    Strategy("api-clear-tool-uses", Manager.API_EDIT,
             "the API's context editing (clear_tool_uses_20250919) played offline: old tool "
             "results become a placeholder past the trigger, memory off",
             {"memory": False, "pinned": False}),
    Strategy("api-compaction", Manager.API_COMPACT,
             "the API's server compaction played offline: past the trigger (the context "
             "limit, in tokens) all but the latest turn becomes one summary, memory off",
             {"memory": False, "pinned": False}),
    Strategy("observation-masking", Manager.OBSERVATION_MASKING,
             "observation masking: the last 10 turns' tool observations stay whole, every "
             "older one becomes a placeholder naming its saved file, memory off",
             {"memory": False, "pinned": False}),
)
DEFAULT_STRATEGIES = ("truncate", "compact", "compact+memory")
SIDE_PURPOSES = ("summary", "select", "extract", "consolidate")


class CompareError(ValueError):
    """A strategy list the user must fix; the message says which name and what exists."""


@dataclass(frozen=True)
class ProbeResult:
    ask: str
    expect: str
    answerable: bool
    found_in: tuple[str, ...] = ()  # system-prompt sections and/or "messages"
    turn: int = 0  # the turn (1-based, across sessions) after which it was checked

    def to_json(self) -> dict[str, Any]:
        return {"ask": self.ask, "expect": self.expect, "answerable": self.answerable,
                "found_in": list(self.found_in), "turn": self.turn}


@dataclass(frozen=True)
class StrategyResult:
    """What one strategy cost and kept on one scenario."""

    name: str
    manager: Manager  # who kept the context small (the strategy's)
    description: str
    ok: bool
    calls: int
    peak_chars: int
    mean_chars: int
    side_calls: int
    losses: int
    probes: tuple[ProbeResult, ...] = ()
    chars_per_call: tuple[int, ...] = ()  # the series behind peak/mean, for a chart
    mean_system_chars: int = 0  # the system prompt beside them (memory lives there)
    side_work: dict[str, int] = field(default_factory=dict)  # side_calls by purpose
    error: str | None = None
    billed_input_tokens: int = 0  # main + side call input, cache reads and writes included
    cache_read_share: float = 0.0  # of billed input, read back from the prompt cache
    est_cost: float | None = None  # USD for the reference model; None without a price
    stand_in: dict[str, int] = field(default_factory=dict)  # ctxlab's summaries, by stage

    @property
    def notes(self) -> tuple[str, ...]:
        """Why side work happened that the description does not promise, in words."""
        return summary_notes(self.manager, self.stand_in)

    @property
    def probes_failed(self) -> int:
        return sum(1 for p in self.probes if not p.answerable)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "manager": self.manager.value,
            "description": self.description, "ok": self.ok,
            "peak_chars": self.peak_chars, "mean_chars": self.mean_chars, "calls": self.calls,
            "side_calls": self.side_calls, "side_work": dict(self.side_work),
            "losses": self.losses, "probes": [p.to_json() for p in self.probes],
            "chars_per_call": list(self.chars_per_call),
            "mean_system_chars": self.mean_system_chars, "error": self.error,
            "billed_input_tokens": self.billed_input_tokens,
            "cache_read_share": round(self.cache_read_share, 4),
            "est_cost": None if self.est_cost is None else round(self.est_cost, 6),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Comparison:
    scenario: str
    strategies: tuple[StrategyResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "strategies": [s.to_json() for s in self.strategies]}


def parse_strategies(text: str | Iterable[str]) -> list[Strategy]:
    """``"truncate,compact"`` (or a list of names) → strategies, in the order given."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    if not names:
        raise CompareError(f"no strategy given; choose from {', '.join(STRATEGIES)}")
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise CompareError(f"unknown strategy {unknown[0]!r}; choose from "
                           f"{', '.join(STRATEGIES)}")
    return [STRATEGIES[n] for n in dict.fromkeys(names)]


# -- probes ---------------------------------------------------------------------------------


def probes_from_events(events: list[Event]) -> list[ProbeResult]:
    """The runner judges each scripted probe after its turn and emits a ``probe`` event;
    the turn is counted from the ``turn_start`` events before it."""
    turn = 0
    probes = []
    for e in events:
        if isinstance(e, TurnStart):
            turn += 1
        elif isinstance(e, ProbeChecked):
            probes.append(ProbeResult(e.ask, e.expect, e.answerable, tuple(e.found_in), turn))
    return probes


# -- metrics --------------------------------------------------------------------------------


def side_work(events: list[Event], memory: bool) -> dict[str, int]:
    """Side work by purpose: one per operation, whoever answered it.

    A model answer shows as a ``model_request`` of that purpose; an offline answer shows only
    as its outcome, so each purpose takes the larger of the two counts (never their sum):

    * ``summary`` — ``stage`` events compact_history / reactive_compact / manual_compact;
    * ``select`` — ``memory_selected`` events;
    * ``extract`` — one attempt per finished request while memory is on (``turn_end``);
    * ``consolidate`` — ``memory_consolidated`` and ``memory_consolidation_failed``.
    """
    requests = Counter(e.purpose for e in events
                       if isinstance(e, ModelRequest) and e.purpose != "main")
    done: Counter[str] = Counter()
    for e in events:
        if isinstance(e, Stage) and e.stage in summary_stages():
            done["summary"] += 1
        elif isinstance(e, MemorySelected):
            done["select"] += 1
        elif isinstance(e, TurnEnd) and memory:
            done["extract"] += 1
        elif isinstance(e, MemoryConsolidated | MemoryConsolidationFailed):
            done["consolidate"] += 1
    purposes = [*SIDE_PURPOSES, *sorted(set(requests) - set(SIDE_PURPOSES))]
    return {p: max(requests[p], done[p]) for p in purposes}


# Summaries a manager other than the pipeline does not write itself, and why they happen.
SUMMARY_CAUSES = {
    "reactive_compact": "a prompt was refused as too long (the scenario scripts the refusal) "
                        "and the reactive compact recovered with ctxlab's summary",
    "manual_compact": "the model called the compact tool, which ctxlab's summary answers",
}


def stand_in_summaries(strategy: Strategy, events: list[Event]) -> dict[str, int]:
    """Summaries ctxlab wrote for a strategy whose manager has no answer of its own (to a
    refused prompt, to the compact tool), by stage.

    The reactive compact after a refused prompt and the model's ``compact`` tool fall back on
    ctxlab's summary under the API's context editing, so the ``api-clear-tool-uses`` row
    counts summaries its description does not promise. The pipeline's summaries are its own
    (nothing to explain) and truncation cuts instead of summarising."""
    if strategy.manager is Manager.PIPELINE:
        return {}
    return dict(Counter(e.stage for e in events
                        if isinstance(e, Stage) and e.stage in SUMMARY_CAUSES))


def summary_notes(manager: Manager, stand_in: Mapping[str, int]) -> tuple[str, ...]:
    """One sentence per stand-in stage: how many summaries, and why."""
    return tuple(f"{plural(n, 'summary', 'summaries')}: {SUMMARY_CAUSES[stage]} "
                 f"({manager.value} has no answer of its own)" for stage, n in stand_in.items())


def losses(events: list[Event]) -> int:
    return sum(1 for e in events if isinstance(e, Stage)
               for entry in e.ledger if entry.get("where") == "lost")


def billed_tokens(events: list[Event]) -> Usage:
    """Input as it would be billed: main calls split by the cache estimate, side calls
    (no breakpoints) as plain input."""
    total = Usage()
    for e in events:
        if not isinstance(e, ModelRequest):
            continue
        if e.purpose == "main" and e.cache_read_est is not None:
            uncached = e.est_tokens - e.cache_read_est - (e.cache_write_est or 0)
            total = total + Usage(input=max(uncached, 0), cache_read=e.cache_read_est,
                                  cache_write_5m=e.cache_write_est or 0)
        else:
            total = total + Usage(input=e.est_tokens)
    return total


def summarise(strategy: Strategy, events: list[Event], ok: bool,
              probes: list[ProbeResult], price: Price | None = None) -> StrategyResult:
    main = [e for e in events if isinstance(e, ModelRequest) and e.purpose == "main"]
    sizes = tuple(e.chars for e in main)
    work = side_work(events, bool(strategy.options.get("memory", True)))
    errors = [e.message for e in events if isinstance(e, Error)]
    billed = billed_tokens(events)
    return StrategyResult(
        billed_input_tokens=billed.billed_input, cache_read_share=billed.cache_share,
        est_cost=price.cost(billed) if price is not None else None,
        name=strategy.name, manager=strategy.manager, description=strategy.description,
        ok=ok, calls=len(sizes),
        peak_chars=max(sizes, default=0),
        mean_chars=round(sum(sizes) / len(sizes)) if sizes else 0,
        side_calls=sum(work.values()), losses=losses(events), probes=tuple(probes),
        chars_per_call=sizes, side_work=work, error=errors[-1] if errors else None,
        mean_system_chars=round(sum(e.system_chars for e in main) / len(main)) if main else 0,
        stand_in=stand_in_summaries(strategy, events),
    )


# -- running --------------------------------------------------------------------------------


async def run_strategy(scenario: Scenario, strategy: Strategy,
                       thresholds: Thresholds | None = None) -> StrategyResult:
    """Play ``scenario`` under ``strategy`` in a fresh temporary workspace."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-compare-") as tmp:
        options = dataclasses.replace(
            RunOptions(workspace=Path(tmp) / "workspace", scenario=scenario,
                       provider="scripted", thresholds=thresholds,
                       compaction=strategy.manager),
            **strategy.options)
        recorder = Recorder()
        ok = await AgentSession(options, Emitter(sinks=[recorder])).run()
        return summarise(strategy, recorder.events, ok, probes_from_events(recorder.events),
                         load_prices().reference)


async def compare(scenario: Scenario, strategies: Iterable[Strategy],
                  thresholds: Thresholds | None = None) -> Comparison:
    """Each strategy in turn (never concurrently: runs must not share anything)."""
    results = [await run_strategy(scenario, s, thresholds) for s in strategies]
    return Comparison(scenario.name, tuple(results))


def compare_sync(scenario: Scenario, strategies: Iterable[Strategy],
                 thresholds: Thresholds | None = None) -> Comparison:
    """:func:`compare` for callers without an event loop (the command line, tests)."""
    return asyncio.run(compare(scenario, strategies, thresholds))
