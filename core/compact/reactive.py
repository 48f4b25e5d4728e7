"""``reactive_compact``: recover once from a prompt-too-long error, then try again.

When the model call fails because the prompt is too long, the whole history goes to a
transcript, everything but the last 5 messages (never splitting a tool_use from its
results) is summarised, and the call is retried. One recovery is allowed per failing
streak; the counter resets after a successful call. Errors compaction cannot fix
(authentication, network, anything else) propagate untouched.
"""

from __future__ import annotations

from core.compact.context import CompactContext, StageRun
from core.compact.summarizer import Summarizer
from core.compact.summary import ledger_to_transcript, summary_input, summary_message
from core.messages import splits_pair
from core.providers.base import AuthError, ContextOverflow, NetworkError, is_overflow_message


def is_overflow_error(error: BaseException) -> bool:
    """Prompt-too-long in any of its forms: typed, HTTP 413, or a known message."""
    if isinstance(error, ContextOverflow):
        return True
    if isinstance(error, AuthError | NetworkError):
        return False
    if getattr(error, "status_code", None) == 413 or getattr(error, "status", None) == 413:
        return True
    return is_overflow_message(str(error))


def reactive_tail_start(messages: list[dict], ctx: CompactContext) -> int:
    tail_start = max(0, len(messages) - ctx.thresholds.reactive_keep)
    if not ctx.broken("pair-protection") and splits_pair(messages, tail_start):
        tail_start -= 1
    return tail_start


async def reactive_compact(run: StageRun, summarizer: Summarizer,
                           active_request: str) -> StageRun:
    history, ctx = run.history, run.ctx
    messages = history.messages
    transcript = ctx.archive.write_transcript(messages)
    run.wrote(transcript)
    tail_start = reactive_tail_start(messages, ctx)
    head = messages[:tail_start] if tail_start else messages
    limits = ctx.thresholds
    text = await summarizer.summarize(
        head, active_request,
        summary_input(head, limits.summary_input_limit, limits.summary_head, limits.summary_tail),
    )
    ledger_to_transcript(run, head, transcript)
    summary = summary_message("Reactive compact", active_request, text, transcript)
    history.replace_all([summary, *messages[tail_start:]] if tail_start else [summary])
    run.changed = True
    return run
