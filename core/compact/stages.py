"""The one table of compaction stages: what each is called, what it writes, whether it
summarises, and — for the stages ``prepare()`` runs itself — how and when it runs.

The pipeline runs the local stages in table order; the inspector, the compare lab and the
locales derive their facts from the rows (a stage's label is ``hint.<name>`` in each
locale). Adding a stage is its module plus one row (and its two locale strings);
:func:`registered` adds a row for a while, which is how a test proves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.compact.budget import tool_result_budget
from core.compact.context import CompactContext, StageRun
from core.compact.fit import fit_tool_results
from core.compact.managers import Manager
from core.compact.micro import micro_compact
from core.compact.snip import snip_compact
from core.measure import Measured

LocalStage = Callable[[Measured, CompactContext], StageRun]


@dataclass(frozen=True)
class StageSpec:
    """One row of the table."""

    name: str
    writes: str  # "results" (one file per result), "transcript" (the whole list), "nothing"
    summarises: bool = False
    run: LocalStage | None = None  # a stage prepare() runs itself, before any summary
    over_limit_only: bool = False  # …only while the history is above the trigger
    manager: Manager = Manager.PIPELINE  # whose stage it is (its events' ``by``)
    # The Thresholds it reads (attribute names): what a learner is shown as "in force".
    reads: tuple[str, ...] = ()

    @property
    def rule_key(self) -> str:
        """The locale key of its rule in one sentence (optional: a stage may have none)."""
        return f"rule.{self.name}"

    @property
    def why_key(self) -> str:
        """The locale key of "why it fired" with the numbers that crossed (optional)."""
        return f"why.{self.name}"


def _micro(history: Measured, ctx: CompactContext) -> StageRun:
    return micro_compact(history, ctx, ctx.thresholds.target)


def _fit(history: Measured, ctx: CompactContext) -> StageRun:
    return fit_tool_results(history, ctx, ctx.thresholds.target)


# The course's order. The last three run outside prepare()'s local pass: compact_history
# when still above the trigger (a model call), reactive after an overflow, manual on the
# model's ``compact`` tool.
TABLE: list[StageSpec] = [
    StageSpec("tool_result_budget", "results", run=tool_result_budget,
              reads=("batch_limit", "large_result", "budget_preview")),
    StageSpec("snip_compact", "transcript", run=snip_compact,
              reads=("max_messages", "snip_head", "snip_tail")),
    StageSpec("micro_compact", "results", run=_micro, over_limit_only=True,
              reads=("context_limit", "target", "keep_recent", "micro_short")),
    StageSpec("fit_tool_results", "results", run=_fit, over_limit_only=True,
              reads=("context_limit", "target", "fit_preview")),
    StageSpec("compact_history", "transcript", summarises=True,
              reads=("context_limit", "summary_input_limit")),
    StageSpec("reactive_compact", "transcript", summarises=True,
              reads=("reactive_keep", "max_reactive_retries")),
    StageSpec("manual_compact", "transcript", summarises=True,
              reads=("summary_input_limit",)),
    # The other managers ctxlab runs or hears from; none runs in prepare()'s pass. Truncation's
    # one cut; the Messages API's own context management (core.sources.agent.api_stages),
    # whose clear_tool_uses the offline engine (core.compact.clear_tool_uses) also plays.
    StageSpec("sliding_window", "nothing", manager=Manager.TRUNCATE),
    StageSpec("api_clear_tool_uses", "results", manager=Manager.API_EDIT),
    StageSpec("api_clear_thinking", "nothing", manager=Manager.API_EDIT),
    StageSpec("api_compaction", "transcript", summarises=True, manager=Manager.API_COMPACT),
]


def stage_names() -> tuple[str, ...]:
    return tuple(spec.name for spec in TABLE)


def spec_of(name: str) -> StageSpec | None:
    """The row of the stage called ``name`` (None: another agent's stage, not in the table)."""
    return next((spec for spec in TABLE if spec.name == name), None)


def pipeline_stages() -> tuple[str, ...]:
    """The pipeline's own stages (a scenario can fire them all offline)."""
    return tuple(spec.name for spec in TABLE if spec.manager is Manager.PIPELINE)


def local_stages() -> list[StageSpec]:
    """The stages prepare() runs itself, in order."""
    return [spec for spec in TABLE if spec.run is not None]


def summary_stages() -> frozenset[str]:
    return frozenset(spec.name for spec in TABLE if spec.summarises)


def transcript_stages() -> frozenset[str]:
    """Stages that save the whole list they received (their *before*) as a transcript."""
    return frozenset(spec.name for spec in TABLE if spec.writes == "transcript")


@contextmanager
def registered(spec: StageSpec, after: str) -> Iterator[StageSpec]:
    """Add ``spec`` right after the stage named ``after``, for the duration of the block."""
    names = stage_names()
    if spec.name in names:
        raise ValueError(f"a stage named {spec.name!r} already exists")
    TABLE.insert(names.index(after) + 1, spec)
    try:
        yield spec
    finally:
        TABLE.remove(spec)
