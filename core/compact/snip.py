"""Stage 2 — ``snip_compact``: archive the middle of a long history, keep head and tail.

With more than ``max_messages`` (50) messages, the first 3 and the last 46 stay and the
middle becomes one marker, ``[N messages archived at .transcripts/…]``, after the whole list
was written to a transcript. Cut points move so that a tool_use is never separated from its
results (so the result may exceed 50 messages), and a middle that is already a single valid
marker is left alone, which makes repeated calls stable.
"""

from __future__ import annotations

from core.archive.store import archive_marker_text, content_size
from core.compact.context import CompactContext, StageRun
from core.messages import blocks, has_tool_result, has_tool_use, is_block, splits_pair


def snip_bounds(messages: list[dict], ctx: CompactContext) -> tuple[int, int]:
    """``(head_end, tail_start)`` after the course's pair-protection rules."""
    limits = ctx.thresholds
    head_end = limits.snip_head
    tail_start = len(messages) - limits.snip_tail
    if ctx.broken("pair-protection"):
        return head_end, tail_start
    if head_end - 1 < len(messages) and has_tool_use(messages[head_end - 1]):
        while head_end < tail_start and has_tool_result(messages[head_end]):
            head_end += 1
    if splits_pair(messages, tail_start):
        tail_start -= 1
    return head_end, tail_start


def snip_compact(run: StageRun) -> StageRun:
    history, ctx = run.history, run.ctx
    messages = history.messages
    if len(messages) <= ctx.thresholds.max_messages:
        return run
    head_end, tail_start = snip_bounds(messages, ctx)
    if head_end >= tail_start:
        return run
    middle = messages[head_end:tail_start]
    if len(middle) == 1 and ctx.archive.valid_archive_marker(middle[0].get("content")):
        return run
    transcript = ctx.archive.write_transcript(messages)
    run.wrote(transcript)
    marker = {"role": "user", "content": archive_marker_text(len(middle), transcript)}
    for message in middle:
        for block in blocks(message):
            if is_block(block, "tool_result"):
                _ledger_for(run, block, transcript)
    history.replace_all([*messages[:head_end], marker, *messages[tail_start:]])
    run.changed = True
    return run


def _ledger_for(run: StageRun, block: dict, transcript: str) -> None:
    """A result already behind a trusted pointer is recoverable from its own file."""
    tool_use_id = block.get("tool_use_id", "")
    content = block.get("content", "")
    trusted = run.ctx.archive.trusted_pointer(tool_use_id, content)
    if trusted:
        run.took(tool_use_id, run.ctx.archive.manifest_entry(trusted).chars, trusted)
    else:
        run.took(tool_use_id, content_size(content), transcript)
