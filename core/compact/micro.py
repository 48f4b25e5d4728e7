"""Stage 3a — ``micro_compact``: replace old, already-seen results with pointers.

Results the model has not seen yet (those after the last assistant message) are never
touched, and the ``keep_recent`` (3) most recent seen results stay intact. Older ones, oldest
first, are saved to disk and replaced by ``[Earlier tool result saved at …]`` until the
history is at the target (40,000). Short results (≤ 120 chars) are left alone. A result that
already sits behind a trusted pointer reuses that file; a broken pointer is reported and left
as it is, never saved as if it were the result.
"""

from __future__ import annotations

from typing import Any

from core.archive.store import content_size, earlier_text, pointer_path
from core.compact.context import StageRun
from core.messages import iter_tool_results


def unseen_positions(messages: list[dict]) -> set[tuple[int, int]]:
    """``(message_idx, block_idx)`` of results after the last assistant message."""
    last_assistant = -1
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            last_assistant = i
            break
    return {(mi, bi) for mi, bi, _ in iter_tool_results(messages) if mi > last_assistant}


def micro_compact(run: StageRun, target: int | None = None) -> StageRun:
    history, ctx = run.history, run.ctx
    limits = ctx.thresholds
    # Break switches (teaching lab) — each flag names the protection it turns off.
    blind = ctx.broken("unseen-guard")
    chain = ctx.broken("pointer-idempotence")
    never_seen = unseen_positions(history.messages)
    unseen = set() if blind else never_seen
    consumed = [(mi, bi) for mi, bi, _ in iter_tool_results(history.messages)
                if (mi, bi) not in unseen]
    for mi, bi in consumed[: max(len(consumed) - limits.keep_recent, 0)]:
        if target is not None and history.chars <= target:
            break
        block = history.messages[mi]["content"][bi]
        tool_use_id = block.get("tool_use_id", "")
        content = block.get("content", "")
        size = content_size(content)
        # Under the break a pointer is re-compacted like content, however short it is.
        pointer = pointer_path(content) if chain else None
        if size <= limits.micro_short and pointer is None:
            continue
        # Ledger extras make a break's consequence visible: a result the model never saw,
        # or a placeholder whose new file holds nothing but the previous pointer.
        extra: dict[str, Any] = {}
        if blind and (mi, bi) in never_seen:
            extra["unseen"] = True
        if pointer is not None:
            extra["points_to"] = pointer
        path = None if chain else ctx.archive.trusted_pointer(tool_use_id, content)
        if path is None:
            broken = None if chain else ctx.archive.broken_pointer(tool_use_id, content)
            if broken is not None:
                run.broken_pointer(tool_use_id, broken)
                continue
            if ctx.broken("persist-before-placeholder"):
                path = ctx.archive.path_for(tool_use_id, content)
                history.set_content(mi, bi, earlier_text(path))
                run.took(tool_use_id, size, "lost", **extra)
                continue
            path = ctx.archive.persist(tool_use_id, content)
            run.wrote(path)
            original = size
        else:
            original = ctx.archive.manifest_entry(path).chars
        new = earlier_text(path)
        if new == content:
            continue
        history.set_content(mi, bi, new)
        run.took(tool_use_id, original, path, **extra)
    return run
