"""One plain line per strategy: what this session teaches about it, from its own numbers.

Rule-based on purpose: every clause is a figure of the run (set against the recorded run when
there is one), so the line can be checked against the table. It says what the strategy would
have cost and kept on this trajectory, never whether the agent would have succeeded under it.
"""

from __future__ import annotations

from core.whatif.model import StrategyRun
from core.wording import plural


def tokens_text(tokens: int) -> str:
    """``131k`` from ten thousand up, the exact count below."""
    return f"{round(tokens / 1000)}k" if tokens >= 10_000 else f"{tokens:,}"


def percent(part: float, whole: float) -> str:
    return f"{round(100 * part / whole)}%"


def lesson(run: StrategyRun, original: StrategyRun | None) -> str:
    """The line for ``run``; ``original`` is the recorded run when it was compared."""
    if run.error is not None:
        return f"stopped at request {len(run.requests)}: {run.error}"
    clauses = [_price(run, original), f"peak {tokens_text(run.peak_tokens)} tokens"]
    if run.compactions:
        clauses.append(plural(run.compactions, "compaction"))
    if run.results_left:
        kept = "all recoverable" if run.results_recoverable == run.results_left else \
            f"{run.results_recoverable} recoverable"
        clauses.append(f"{plural(run.results_left, 'tool result')} left the context "
                       f"({kept})")
    if run.facts:
        clauses.append(_facts(run))
    return ", ".join(clauses)


def _facts(run: StrategyRun) -> str:
    """How many facts the session relied on were gone when it did, and how many of those
    were files it read again (a likely cost of the drop)."""
    gone = len(run.facts) - run.facts_kept
    if not gone:
        return f"all {len(run.facts)} relied-on facts kept"
    text = f"{gone} of {len(run.facts)} relied-on facts gone"
    rereads = run.rereads_after_drop
    if rereads:
        text += " (all re-read after the drop)" if rereads == gone else \
            f" ({rereads} re-read after the drop)"
    return text


def _price(run: StrategyRun, original: StrategyRun | None) -> str:
    if original is None or original is run:
        share = round(100 * run.cache_read_share)
        head = "as recorded" if run.name == "original" else "as played"
        return f"{head}: {share}% of input read from the cache"
    if run.cost is not None and original.cost:
        return f"costs {percent(run.cost, original.cost)} of the recorded run"
    if original.billed_input:
        return f"bills {percent(run.billed_input, original.billed_input)} of the recorded " \
               "input tokens"
    return f"bills {run.billed_input:,} input tokens"
