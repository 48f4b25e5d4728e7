"""What a client changed between two requests of one conversation, and how messages are
compared to tell.

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

import hashlib
import json
from collections.abc import Callable
from typing import Any

from core.compact.managers import Manager
from core.events import Stage
from core.measure import json_chars
from core.sources.watch.history_shapes import (
    encrypted_size,
    is_summary,
    is_summary_item,
    preview_of,
    result_text,
    role_of,
    summary_text,
    tool_ids,
    tool_results,
)
from core.sources.watch.identity import comparable

PREVIEW = 160
BY = Manager.CLIENT


def key_json(message: Any) -> str:
    """A message's normalised JSON, as compared (see the module)."""
    return json.dumps(comparable(_without_item_id(message)), ensure_ascii=False,
                      sort_keys=True)


# Keys of a Responses item that label it rather than hold context: Codex sends the context
# it re-injects after a compaction (its instructions, the environment) as the same text
# under a new ``id``, and its built-in provider stamps items with a creation time.
ITEM_LABELS = ("id", "internal_chat_message_metadata_passthrough")


def _without_item_id(message: Any) -> Any:
    """A Responses item as compared: without the keys that only label it."""
    if isinstance(message, dict) and "type" in message:
        return {k: v for k, v in message.items() if k not in ITEM_LABELS}
    return message


def key_digest(dumped: str) -> str:
    """The digest of a :func:`key_json`: what two messages are compared by."""
    return hashlib.blake2b(dumped.encode("utf-8", errors="surrogatepass"),
                           digest_size=16).hexdigest()


def message_key(message: Any) -> str:
    """A message's identity for comparison: a digest of its normalised JSON (no
    ``cache_control``; a string content as one text block)."""
    return key_digest(key_json(message))


def _result_key(content: Any) -> str:
    return message_key({"content": content})  # a string result equals one text block


def diff_requests(prev: list[Any], cur: list[Any], *, from_request: int,
                  prev_keys: list[str] | None = None,
                  cur_keys: list[str] | None = None, conversation: str | None = None,
                  summary_asked: bool = False,
                  chars: Callable[[list[Any]], int] = json_chars,
                  ) -> tuple[int, int, int, tuple[Stage, ...]]:
    """(appended, removed, rewritten, client stages) between two message lists; the
    ledger's ``where`` names ``from_request`` (of ``conversation``, when given).

    ``summary_asked``: the client asked for a summary in between, so history that went is
    a summary's doing even when the summary it kept reads as before (a model that
    summarises twice alike). ``chars`` measures a message list: a caller that knows each
    message's size already passes a cheaper one, so a long session is measured once."""
    prev_keys = prev_keys if prev_keys is not None else [message_key(m) for m in prev]
    cur_keys = cur_keys if cur_keys is not None else [message_key(m) for m in cur]
    same = 0
    while same < min(len(prev), len(cur)) and prev_keys[same] == cur_keys[same]:
        same += 1
    if same == len(prev):
        return len(cur) - same, 0, 0, ()
    cur_set = set(cur_keys)
    prev_results, cur_results = tool_results(prev), tool_results(cur)
    # the same object is the same result: a history that shares its blocks between two
    # requests (ctxlab's own) is compared without dumping every result twice
    rewritten_ids = [i for i, v in prev_results.items() if i in cur_results
                     and v is not cur_results[i]
                     and _result_key(v) != _result_key(cur_results[i])]
    rewritten_set = set(rewritten_ids)
    removed = [i for i, k in enumerate(prev_keys) if k not in cur_set
               and not any(t in cur_results or t in rewritten_set for t in tool_ids(prev[i]))
               and not (i < len(cur) and _same_slot(prev[i], cur[i]))]
    removed_set = set(removed)
    # The new tail: messages after the last one carried over from ``prev``.
    prev_set = set(prev_keys)
    last_kept = max((j for j, k in enumerate(cur_keys) if k in prev_set), default=-1)
    if rewritten_ids:
        last_kept = max(last_kept, max(j for j, m in enumerate(cur)
                                       if set(tool_ids(m)) & rewritten_set))
    if last_kept == -1 and cur and is_summary(cur[0]):
        last_kept = 0  # the summary stands in for the past; what follows it is new
    if summary_asked and removed:
        # Codex puts its summary (or the compaction item) after the history it kept: it is
        # part of what the compaction left, not the next turn.
        tail = next((j for j in range(last_kept + 1, len(cur))
                     if cur_keys[j] not in prev_set and is_summary_item(cur[j])), None)
        last_kept = tail if tail is not None else last_kept
    appended = len(cur) - last_kept - 1
    kept = cur[: last_kept + 1]
    stages: list[Stage] = []
    where = {"where": f"request {from_request}",
             **({"conversation": conversation} if conversation else {})}
    shrunk = [i for i in rewritten_ids
              if json_chars(cur_results[i]) < json_chars(prev_results[i])]
    if shrunk:  # a result that grew was rewritten, not compacted
        stages.append(_micro_stage(prev, kept, prev_results, cur_results, shrunk, where,
                                   chars))
    if removed:
        inserted = [m for m, k in zip(kept, cur_keys, strict=False) if k not in prev_set
                    and not set(tool_ids(m)) & rewritten_set]
        if summary_asked and not any(is_summary(m) for m in inserted):
            inserted = [m for m in kept if is_summary(m)][:1]
        stages.append(_shrink_stage(prev, kept, removed, inserted, where, chars))
    rewritten = len(rewritten_ids) + sum(
        1 for i in range(min(len(prev), len(cur)))
        if prev_keys[i] != cur_keys[i] and i not in removed_set
        and _same_slot(prev[i], cur[i]) and not set(tool_ids(prev[i])) & rewritten_set)
    return appended, len(removed), rewritten, tuple(stages)


def _same_slot(a: Any, b: Any) -> bool:
    """A message rewritten in place: same role, same tool ids, different content."""
    return (isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role")
            and tool_ids(a) == tool_ids(b) and bool(tool_ids(a)))


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
