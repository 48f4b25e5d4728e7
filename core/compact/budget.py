"""Stage 1 — ``tool_result_budget``: keep one batch of tool results under its budget.

Only the newest message is looked at (the results that just arrived). While their total is
over ``batch_limit`` (200,000), the largest result over ``large_result`` (30,000) is saved
to disk and replaced by a ``<persisted-output>`` wrapper with a 2,000-char preview. As in the
course, a smaller result over 30k may stay inline once the total is under budget.

A result this stage will save whatever else the batch holds (longer than the batch limit
and the large-result size) is saved before the pipeline measures the history
(:func:`save_early`): the one pass that writes and hashes it also counts its JSON length,
and the measure takes that count instead of reading the text a second time.
"""

from __future__ import annotations

from core.archive.store import STREAMED_CHARS, content_as_text, content_size, wrapper_text
from core.compact.context import CompactContext, StageRun
from core.messages import is_block


def tool_result_budget(run: StageRun) -> StageRun:
    history, ctx = run.history, run.ctx
    if not history.messages:
        return run
    last_idx = len(history) - 1
    last = history.messages[last_idx]
    if last.get("role") != "user" or not isinstance(last.get("content"), list):
        return run
    limits = ctx.thresholds
    found = [
        (bi, block) for bi, block in enumerate(last["content"]) if is_block(block, "tool_result")
    ]
    sizes = {bi: content_size(block.get("content", "")) for bi, block in found}
    total = sum(sizes.values())
    for bi, block in sorted(found, key=lambda item: -sizes[item[0]]):
        if total <= limits.batch_limit:
            break
        if sizes[bi] <= limits.large_result:
            continue
        tool_use_id = block.get("tool_use_id", "")
        content = block.get("content", "")
        if ctx.archive.trusted_pointer(tool_use_id, content):
            continue  # already behind a wrapper ctxlab wrote: nothing more to save
        text = content_as_text(content)
        preview = text[: limits.budget_preview]
        # The wrapper's length, with the longest name the file can get: hashing a fresh
        # 10 MB result only to learn its name's length would double the work (the file is
        # written while it is hashed, below).
        if len(wrapper_text(ctx.archive.longest_path(tool_use_id), preview)) >= sizes[bi] and \
                len(wrapper_text(ctx.archive.path_for(tool_use_id, content), preview)) \
                >= sizes[bi]:
            continue  # only with odd thresholds: a wrapper must never grow the batch
        lose = ctx.broken("persist-before-placeholder")  # teaching lab: wrapper, no file
        if lose:
            path = ctx.archive.path_for(tool_use_id, content)
            new = wrapper_text(path, preview)
        else:
            path = ctx.archive.persist(tool_use_id, content)
            run.wrote(path)
            new = ctx.archive.wrap(path, preview)
        history.set_content(last_idx, bi, new)
        total += len(new) - sizes[bi]
        run.took(tool_use_id, sizes[bi], "lost" if lose else path)
    return run


def save_early(messages: list[dict], ctx: CompactContext) -> None:
    """Start saving the results :func:`tool_result_budget` will certainly save.

    Certainly: a text result over the batch limit keeps the batch's total over it until
    the result itself is saved (larger ones go first), and over ``large_result`` it is not
    skipped. Only a pointer ctxlab wrote is skipped, and no pointer is this long; a save
    that goes unused anyway is dropped by the pipeline.
    """
    if not messages or ctx.broken("persist-before-placeholder"):
        return
    last = messages[-1]
    if last.get("role") != "user" or not isinstance(last.get("content"), list):
        return
    limits = ctx.thresholds
    least = max(STREAMED_CHARS, limits.batch_limit + 1, limits.large_result + 1)
    for block in last["content"]:
        content = block.get("content") if is_block(block, "tool_result") else None
        if type(content) is str and len(content) >= least:
            ctx.archive.begin_persist(block.get("tool_use_id", ""), content)
