"""Why a stage fired, in the numbers that crossed, and its rule in one sentence.

A learner who sees ``micro_compact`` fire should not have to know the pipeline by heart to
say why: the stage event carries the sizes the pipeline compared (``before_chars``,
``before_messages``, the ledger), and the thresholds in force say what they were compared
with — "28,775 chars > trigger 20,000", "53 messages > 50". Everything here is pure text
from those two, so the auto-pause line, the inspector's "why" pane and the tests share it.
"""

from __future__ import annotations

from core.compact.stages import spec_of
from core.config import Thresholds
from core.events import Stage
from tui.i18n import t


def _optional(key: str) -> str:
    """A locale string that a stage may lack (another agent's stage): "" when missing."""
    text = t(key)
    return "" if text == key else text


def why_fired(event: Stage, limits: Thresholds) -> str:
    """The comparison that made ``event``'s stage act, with both numbers."""
    stage = event.stage
    fields = dict(chars=event.before_chars, messages=event.before_messages,
                  limit=limits.context_limit, target=limits.target,
                  max=limits.max_messages, keep=limits.keep_recent,
                  batch=limits.batch_limit, large=limits.large_result,
                  tail=limits.reactive_keep, n=len(event.ledger))
    spec = spec_of(stage)
    if spec is None:
        return ""
    text = t(spec.why_key, **fields)
    return "" if text == spec.why_key else text


def stage_rule(stage: str) -> str:
    """The stage's rule in one sentence (``rule.snip_compact``…)."""
    spec = spec_of(stage)
    return _optional(spec.rule_key) if spec is not None else ""


def thresholds_in_force(stage: str, limits: Thresholds) -> str:
    """``context_limit 20,000 · target 16,000 · keep_recent 3`` for the stage's knobs."""
    parts = []
    spec = spec_of(stage)
    for name in spec.reads if spec is not None else ():
        value = getattr(limits, name)
        parts.append(f"{name} {value:,}" if isinstance(value, int) else f"{name} {value}")
    return " · ".join(parts)


def what_it_did(event: Stage) -> str:
    """Sizes before → after, files written, results moved out."""
    text = t("why.did", before=event.before_chars, after=event.after_chars,
             before_msgs=event.before_messages, after_msgs=event.after_messages)
    if event.files:
        text += " · " + t("why.files", n=len(event.files))
    if event.ledger:
        text += " · " + t("why.ledger", n=len(event.ledger))
    return text
