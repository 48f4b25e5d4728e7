"""What a client changed between two requests of one conversation, and how messages are
compared to tell.

The comparison itself is the turn diff's (:mod:`core.views.turn_diff`), which every source
shares; this module turns what it finds into the watch's counts and client stages.
A client resends its whole history on every call, so two consecutive requests tell what
happened in between: messages appended (the last reply and the new turn), and — the view
no client gives — what it removed or rewrote itself. Three kinds of client compaction
become ``stage`` events with ``by="client"``:

* ``client_micro_compact`` — tool results replaced by a shorter placeholder (Claude Code's
  micro-compaction writes ``[Old tool result content cleared]``);
* ``client_summary`` — the history shrank and a new message (a summary) took the place of
  the past;
* ``client_truncate`` — the history shrank with nothing in its place.

Codex puts its summary (or the ``compaction`` item) *after* the history it kept, so it is
looked for there too. Comparisons ignore ``cache_control`` markers (clients move them to
the newest block on every call), the keys that only label a Responses item, and a string
content equals one text block of that string (Claude Code sends its newest prompt as a
block and, one call later, the same prompt as a string): none is a change to the context.
Messages are compared by a digest of their JSON, so a conversation holds no second copy of
its history to compare with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.compact.managers import Manager
from core.events import Stage
from core.measure import json_chars
from core.sources.watch.history_shapes import (
    encrypted_size,
    is_summary,
    preview_of,
    result_text,
    role_of,
    summary_text,
    tool_ids,
    tool_results,
)
from core.views.turn_diff import compare, key_digest, key_json, message_key

PREVIEW = 160
BY = Manager.CLIENT
__all__ = ["diff_requests", "key_digest", "key_json", "message_key"]


def diff_requests(prev: list[Any], cur: list[Any], *, from_request: int,
                  prev_keys: list[str] | None = None,
                  cur_keys: list[str] | None = None, conversation: str | None = None,
                  summary_asked: bool = False,
                  chars: Callable[[list[Any]], int] = json_chars,
                  ) -> tuple[int, int, int, tuple[Stage, ...]]:
    """(appended, removed, rewritten, client stages) between two message lists, as
    :func:`core.views.turn_diff.compare` finds them; the ledger's ``where`` names
    ``from_request`` (of ``conversation``, when given).

    ``summary_asked``: the client asked for a summary in between, so history that went is
    a summary's doing even when the summary it kept reads as before (a model that
    summarises twice alike). ``chars`` measures a message list: a caller that knows each
    message's size already passes a cheaper one, so a long session is measured once."""
    prev_keys = prev_keys if prev_keys is not None else [message_key(m) for m in prev]
    cur_keys = cur_keys if cur_keys is not None else [message_key(m) for m in cur]
    found = compare(prev, cur, prev_keys=prev_keys, cur_keys=cur_keys,
                    summary_asked=summary_asked)
    if not found.removed and not found.rewritten:
        return len(found.appended), 0, 0, ()
    kept = cur[: found.last_kept + 1]
    rewritten_ids = list(found.rewritten_ids)
    prev_results, cur_results = tool_results(prev), tool_results(cur)
    stages: list[Stage] = []
    where = {"where": f"request {from_request}",
             **({"conversation": conversation} if conversation else {})}
    shrunk = [i for i in rewritten_ids
              if json_chars(cur_results[i]) < json_chars(prev_results[i])]
    if shrunk:  # a result that grew was rewritten, not compacted
        stages.append(_micro_stage(prev, kept, prev_results, cur_results, shrunk, where,
                                   chars))
    if found.removed:
        prev_set = set(prev_keys)
        inserted = [m for m, k in zip(kept, cur_keys, strict=False) if k not in prev_set
                    and not set(tool_ids(m)) & set(rewritten_ids)]
        if summary_asked and not any(is_summary(m) for m in inserted):
            inserted = [m for m in kept if is_summary(m)][:1]
        stages.append(_shrink_stage(prev, kept, list(found.removed), inserted, where, chars))
    return len(found.appended), len(found.removed), found.rewritten, tuple(stages)


def _micro_stage(prev: list[Any], kept: list[Any], prev_results: dict[str, Any],
                 cur_results: dict[str, Any], ids: list[str], where: dict[str, str],
                 chars: Callable[[list[Any]], int]) -> Stage:
    ledger = tuple(
        {"tool_use_id": i, "stage": "client_micro_compact",
         "chars": json_chars(prev_results[i]), "after_chars": json_chars(cur_results[i]),
         "placeholder": result_text(cur_results[i])[:PREVIEW], **where}
        for i in ids)
    return Stage(stage="client_micro_compact", before_chars=chars(prev),
                 after_chars=chars(kept), before_messages=len(prev),
                 after_messages=len(kept), tool_use_ids=tuple(ids), ledger=ledger, by=BY)


def _shrink_stage(prev: list[Any], kept: list[Any], removed: list[int], inserted: list[Any],
                  where: dict[str, str], chars: Callable[[list[Any]], int]) -> Stage:
    summary = next((m for m in inserted if is_summary(m)), None)
    name = "client_summary" if summary is not None else "client_truncate"
    ledger: list[dict[str, Any]] = [
        {"stage": name, "message_index": i, "role": role_of(prev[i]),
         "chars": json_chars(prev[i]), "preview": preview_of(prev[i])[:PREVIEW],
         "tool_use_ids": tool_ids(prev[i]), **where}
        for i in removed]
    if summary is not None:
        encrypted = encrypted_size(summary)
        ledger.append({"stage": name, "summary": summary_text(summary)[:PREVIEW],
                       "chars": json_chars(summary),
                       **({"encrypted_chars": encrypted} if encrypted is not None else {}),
                       **{k: v for k, v in where.items() if k == "conversation"}})
    ids = tuple(t for i in removed for t in tool_ids(prev[i]))
    return Stage(stage=name, before_chars=chars(prev), after_chars=chars(kept),
                 before_messages=len(prev), after_messages=len(kept), tool_use_ids=ids,
                 ledger=tuple(ledger), by=BY)
