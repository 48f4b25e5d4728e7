"""The one table of compaction stages: what each is called, whose it is, what it writes,
whether it summarises, and — for the stages ``prepare()`` runs itself — how and when it runs.

A stage's name is written once, in its row: whoever runs a stage opens its
:class:`~core.compact.context.StageRun` on the row, and the event takes the row's name and
manager from it. The pipeline runs the local stages in table order; the inspector, the
compare lab and the workbench derive their facts from the rows. Adding a stage is its module
plus one row (and its words in the UI's locales); :func:`registered` adds a row for a while,
which is how a test proves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.compact.budget import tool_result_budget
from core.compact.context import StageRun
from core.compact.fit import fit_tool_results
from core.compact.managers import Manager
from core.compact.micro import micro_compact
from core.compact.snip import snip_compact

LocalStage = Callable[[StageRun], StageRun]


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


def _micro(run: StageRun) -> StageRun:
    return micro_compact(run, run.ctx.thresholds.target)


def _fit(run: StageRun) -> StageRun:
    return fit_tool_results(run, run.ctx.thresholds.target)


# The course's stages, in its order. The last three run outside prepare()'s local pass:
# compact_history when still above the trigger (a model call), reactive after an overflow,
# manual on the model's ``compact`` tool.
TOOL_RESULT_BUDGET = StageSpec("tool_result_budget", "results", run=tool_result_budget,
                               reads=("batch_limit", "large_result", "budget_preview"))
SNIP_COMPACT = StageSpec("snip_compact", "transcript", run=snip_compact,
                         reads=("max_messages", "snip_head", "snip_tail"))
MICRO_COMPACT = StageSpec("micro_compact", "results", run=_micro, over_limit_only=True,
                          reads=("context_limit", "target", "keep_recent", "micro_short"))
FIT_TOOL_RESULTS = StageSpec("fit_tool_results", "results", run=_fit, over_limit_only=True,
                             reads=("context_limit", "target", "fit_preview"))
COMPACT_HISTORY = StageSpec("compact_history", "transcript", summarises=True,
                            reads=("context_limit", "summary_input_limit"))
REACTIVE_COMPACT = StageSpec("reactive_compact", "transcript", summarises=True,
                             reads=("reactive_keep", "max_reactive_retries"))
MANUAL_COMPACT = StageSpec("manual_compact", "transcript", summarises=True,
                           reads=("summary_input_limit",))
# The other managers ctxlab runs or hears from; none runs in prepare()'s pass. Truncation's
# one cut (core.compact.truncate); the Messages API's own context management
# (core.sources.agent.api_stages), whose clear_tool_uses and compaction ctxlab also plays
# offline (core.compact.clear_tool_uses, core.compact.api_compaction).
SLIDING_WINDOW = StageSpec("sliding_window", "nothing", manager=Manager.TRUNCATE)
API_CLEAR_TOOL_USES = StageSpec("api_clear_tool_uses", "results", manager=Manager.API_EDIT)
API_CLEAR_THINKING = StageSpec("api_clear_thinking", "nothing", manager=Manager.API_EDIT)
API_COMPACTION = StageSpec("api_compaction", "transcript", summarises=True,
                           manager=Manager.API_COMPACT)
# Observation masking (core.compact.observation_masking): older tool results → placeholders.
OBSERVATION_MASK = StageSpec("observation_mask", "results",
                             manager=Manager.OBSERVATION_MASKING)

TABLE: list[StageSpec] = [
    TOOL_RESULT_BUDGET, SNIP_COMPACT, MICRO_COMPACT, FIT_TOOL_RESULTS,
    COMPACT_HISTORY, REACTIVE_COMPACT, MANUAL_COMPACT,
    SLIDING_WINDOW, API_CLEAR_TOOL_USES, API_CLEAR_THINKING, API_COMPACTION,
    OBSERVATION_MASK,
]


def stage_names() -> tuple[str, ...]:
    return tuple(spec.name for spec in TABLE)


def spec_of(name: str) -> StageSpec | None:
    """The row of the stage called ``name`` (None: not a stage of the table)."""
    return next((spec for spec in TABLE if spec.name == name), None)


def row_of(stage: str, by: str) -> StageSpec | None:
    """The row of a stage event: its name *and* its manager must match, since a name can
    be two managers' (a replay's ``manual_compact`` by claude-code is not the pipeline's)."""
    spec = spec_of(stage)
    return spec if spec is not None and spec.manager == by else None


def pipeline_stages() -> tuple[str, ...]:
    """The pipeline's own stages (a scenario can fire them all offline)."""
    return tuple(spec.name for spec in TABLE if spec.manager is Manager.PIPELINE)


def local_stages() -> list[StageSpec]:
    """The stages prepare() runs itself, in order."""
    return [spec for spec in TABLE if spec.run is not None]


def summary_stages() -> frozenset[str]:
    return frozenset(spec.name for spec in TABLE if spec.summarises)


@contextmanager
def registered(spec: StageSpec, after: StageSpec) -> Iterator[StageSpec]:
    """Add ``spec`` right after the row ``after``, for the duration of the block."""
    if spec.name in stage_names():
        raise ValueError(f"a stage named {spec.name!r} already exists")
    TABLE.insert(TABLE.index(after) + 1, spec)
    try:
        yield spec
    finally:
        TABLE.remove(spec)
