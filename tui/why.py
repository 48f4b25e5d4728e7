"""A stage in words: what it does, its rule in one sentence, and why it fired in numbers.

A learner who sees ``micro_compact`` fire should not have to know the pipeline by heart to
say why: the stage event carries the sizes the pipeline compared (``before_chars``,
``before_messages``, the ledger), and the thresholds in force say what they were compared
with — "28,775 chars > trigger 20,000", "53 messages > 50". Everything here is pure text
from those two, so the auto-pause line, the inspector's "why" pane and the tests share it.

Core only names stages; their words are the UI's, looked up here under ``hint.<stage>``,
``rule.<stage>`` and ``why.<stage>``. Only a stage of a row of the table has them — its name
*and* its manager (:func:`core.compact.stages.row_of`): a recorded agent's ``manual_compact``
is its own summary, and ctxlab's rule for that name would be an invented explanation. Such a
stage says instead what that agent did, in the terms it recorded (:func:`recorded_why`).
"""

from __future__ import annotations

from core.compact.stages import StageSpec, row_of
from core.config import Thresholds
from core.events import Manager, Stage
from tui.i18n import t
from tui.managers import manager_label

HINT, RULE, WHY = "hint", "rule", "why"  # the kinds of words a row may have in a locale


def stage_key(kind: str, stage: str) -> str:
    """The locale key of a stage's words: ``hint.snip_compact``, ``why.micro_compact``…"""
    return f"{kind}.{stage}"


def row(event: Stage) -> StageSpec | None:
    """The event's row of the stage table, if the stage is one (by its manager too)."""
    return row_of(event.stage, event.by)


def _words(kind: str, spec: StageSpec | None, **fields: object) -> str:
    """A row's words of one kind, "" when it has none (every kind is optional)."""
    if spec is None:
        return ""
    key = stage_key(kind, spec.name)
    text = t(key, **fields)
    return "" if text == key else text


def stage_hint(event: Stage) -> str:
    """What the stage did, in a few words (``hint.snip_compact``…)."""
    return _words(HINT, row(event))


def recorded_why(event: Stage) -> str:
    """Another agent's compaction, as it recorded it: set off how (its own trigger or the
    user's ``/compact``), at and down to how many tokens, and what it kept — the summary
    and the messages it preserved after it. "" for the pipeline's own stages."""
    if event.by == Manager.PIPELINE or not event.trigger:
        return ""
    at = t("why.recorded.at", tokens=event.pre_tokens) if event.pre_tokens else ""
    post = t("why.recorded.post", tokens=event.post_tokens) if event.post_tokens else ""
    kept = _recorded_kept(event) if event.files and event.after_messages >= 1 else ""
    key = {"auto": "why.recorded.auto", "manual": "why.recorded.manual"}.get(
        event.trigger, "why.recorded.other")
    return t(key, manager=manager_label(event.by), trigger=event.trigger, at=at, post=post,
             kept=kept)


def _recorded_kept(event: Stage) -> str:
    """What the agent kept, a summary having been written. Claude Code keeps its summary,
    then the messages it preserved. Codex keeps the user's messages, then its summary, all
    in one user message: counting the messages after the summary would call a history
    that still holds every prompt "its summary only". A history the agent rewrote without
    compacting (``rewrite``) kept no summary: the file is ctxlab's note of the rewrite."""
    if event.by == Manager.CODEX and event.trigger in ("auto", "manual"):
        return t("why.recorded.codex_kept")
    if event.trigger not in ("auto", "manual"):  # a history rewritten: no summary kept
        return ""
    preserved = event.after_messages - 1
    return t("why.recorded.kept", n=preserved) if preserved else \
        t("why.recorded.summary_only")


def why_fired(event: Stage, limits: Thresholds) -> str:
    """The comparison that made ``event``'s stage act, with both numbers (another agent's
    stage: what it recorded, :func:`recorded_why`)."""
    if row(event) is None:
        return recorded_why(event)
    fields = dict(chars=event.before_chars, messages=event.before_messages,
                  limit=limits.context_limit, target=limits.target,
                  max=limits.max_messages, keep=limits.keep_recent,
                  batch=limits.batch_limit, large=limits.large_result,
                  tail=limits.reactive_keep, n=len(event.ledger))
    if event.refusal_scripted:  # made up by the scenario: never told as an API's verdict
        return t("why.scripted_refusal", **fields)
    return _words(WHY, row(event), **fields)


def stage_rule(event: Stage) -> str:
    """The stage's rule in one sentence (``rule.snip_compact``…)."""
    return _words(RULE, row(event))


def stage_meaning(event: Stage) -> str:
    """What the stage means, in one sentence: its rule, a recorded agent's own account of
    what it did, or at least its hint (the presenter's ``m``)."""
    return stage_rule(event) or recorded_why(event) or stage_hint(event) or \
        t("why.no_meaning", stage=event.stage)


def thresholds_in_force(event: Stage, limits: Thresholds) -> str:
    """``context_limit 20,000 · target 16,000 · keep_recent 3`` for the stage's knobs."""
    parts = []
    spec = row(event)
    for name in spec.reads if spec is not None else ():
        value = getattr(limits, name)
        parts.append(f"{name} {value:,}" if isinstance(value, int) else f"{name} {value}")
    return " · ".join(parts)


def what_it_did(event: Stage) -> str:
    """Sizes before → after, files written, results moved out."""
    text = t("why.did", before=event.before_chars, after=event.after_chars,
             before_msgs=event.before_messages, after_msgs=event.after_messages,
             n=event.after_messages)  # the noun agrees with the count it ends on
    if event.files:
        text += " · " + t("why.files", n=len(event.files))
    if event.ledger:
        text += " · " + t("why.ledger", n=len(event.ledger))
    return text
