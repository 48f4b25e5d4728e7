"""Stage 3b — ``fit_tool_results``: shrink any result, largest first, to a short preview.

Runs only when micro was not enough. It visits every result, unseen ones included, from
largest to smallest, and swaps in a ``<persisted-output>`` wrapper with a 1,000-char preview
when that is shorter, until the history is at the target. Unlike the course, it writes a file
only when the preview is actually used.
"""

from __future__ import annotations

from core.archive.store import content_as_text, content_size, wrapper_text
from core.compact.context import StageRun
from core.measure import json_chars
from core.messages import iter_tool_results


def fit_tool_results(run: StageRun, target: int) -> StageRun:
    history, ctx = run.history, run.ctx
    preview_chars = ctx.thresholds.fit_preview
    found = list(iter_tool_results(history.messages))
    found.sort(key=lambda item: -content_size(item[2].get("content", "")))
    for mi, bi, _ in found:
        if history.chars <= target:
            break
        block = history.messages[mi]["content"][bi]
        tool_use_id = block.get("tool_use_id", "")
        content = block.get("content", "")
        trusted = ctx.archive.trusted_pointer(tool_use_id, content)
        if trusted is None and (broken := ctx.archive.broken_pointer(tool_use_id, content)):
            run.broken_pointer(tool_use_id, broken)
            continue
        if trusted:
            path = trusted
            shortest = len(wrapper_text(path, "")) + min(preview_chars,
                                                         ctx.archive.manifest_entry(path).chars)
            if shortest >= content_size(content):
                continue  # e.g. an [Earlier …] placeholder: a preview can only be longer
            preview = ctx.archive.preview(trusted, preview_chars)
        else:
            path = ctx.archive.path_for(tool_use_id, content)
            preview = content_as_text(content)[:preview_chars]
        new = wrapper_text(path, preview)
        if json_chars(new) >= json_chars(content):
            continue  # the preview would not help: write nothing, not even the file
        if not trusted and ctx.broken("persist-before-placeholder"):  # teaching lab: no file
            history.set_content(mi, bi, new)
            run.took(tool_use_id, content_size(content), "lost")
            continue
        if not trusted:
            ctx.archive.persist(tool_use_id, content)
            run.wrote(path)
        new = ctx.archive.wrap(path, preview)  # recorded: only texts ctxlab wrote are trusted
        original = ctx.archive.manifest_entry(path).chars
        history.set_content(mi, bi, new)
        run.took(tool_use_id, original if trusted else content_size(content), path)
    return run
