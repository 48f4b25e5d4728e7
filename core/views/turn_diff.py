"""What changed between two consecutive requests of one conversation: the turn diff.

A client resends its whole history on every call, so two consecutive requests tell what
happened in between: entries appended (the last reply and the new turn), and — what no
client shows — entries it removed or rewrote itself (a tool result cleared, the past
replaced by a summary). This is the one comparison every source uses: ctxlab's own loop,
both sides of a replay, and the watch, whose ``watch_request`` counts and client stages
(:mod:`core.sources.watch.history_diff`) are built on :func:`compare`.

Entries are compared by a digest of their normalised JSON (:func:`message_key`): no
``cache_control`` markers (clients move them to the newest block on every call), none of
the keys that only label a Responses item, and a string content equal to one text block of
that string (Claude Code sends its newest prompt as a block and, one call later, the same
prompt as a string): none is a change to the context.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from core.measure import json_chars
from core.sources.watch.history_shapes import (
    is_summary,
    is_summary_item,
    preview_of,
    result_text,
    role_of,
    tool_ids,
    tool_results,
)
from core.sources.watch.identity import comparable
from core.sources.watch.openai_requests import item_type

PREVIEW = 160
# Keys of a Responses item that label it rather than hold context: Codex sends the context
# it re-injects after a compaction (its instructions, the environment) as the same text
# under a new ``id``, and its built-in provider stamps items with a creation time.
ITEM_LABELS = ("id", "internal_chat_message_metadata_passthrough")


def key_json(message: Any) -> str:
    """A message's normalised JSON, as compared (see the module)."""
    return json.dumps(comparable(_without_item_id(message)), ensure_ascii=False,
                      sort_keys=True)


def _without_item_id(message: Any) -> Any:
    if isinstance(message, dict) and "type" in message:
        return {k: v for k, v in message.items() if k not in ITEM_LABELS}
    return message


def key_digest(dumped: str) -> str:
    """The digest of a :func:`key_json`: what two messages are compared by."""
    return hashlib.blake2b(dumped.encode("utf-8", errors="surrogatepass"),
                           digest_size=16).hexdigest()


def message_key(message: Any) -> str:
    """A message's identity for comparison: a digest of its normalised JSON."""
    return key_digest(key_json(message))


def result_key(content: Any) -> str:
    """A tool result's identity: a string result equals one text block of it."""
    return message_key({"content": content})


@dataclass(frozen=True)
class Comparison:
    """Which entries of ``cur`` are new, which of ``prev`` went, which were rewritten.

    ``rewritten_ids``: tool calls whose result changed in place (a cleared result);
    ``rewritten_slots``: other entries rewritten in place (same role and tool ids);
    ``last_kept``: the last entry of ``cur`` that belongs to the past (−1: none)."""

    appended: tuple[int, ...] = ()  # indexes in cur
    removed: tuple[int, ...] = ()  # indexes in prev
    rewritten_ids: tuple[str, ...] = ()
    rewritten_slots: tuple[int, ...] = ()  # indexes in prev (and cur)
    last_kept: int = -1

    @property
    def rewritten(self) -> int:
        return len(self.rewritten_ids) + len(self.rewritten_slots)


def compare(prev: list[Any], cur: list[Any], *, prev_keys: list[str] | None = None,
            cur_keys: list[str] | None = None, summary_asked: bool = False) -> Comparison:
    """The comparison of two consecutive message lists (any of the three API shapes).

    ``summary_asked``: the client asked for a summary in between; Codex puts its summary
    (or the ``compaction`` item) after the history it kept, so it is looked for there."""
    prev_keys = prev_keys if prev_keys is not None else [message_key(m) for m in prev]
    cur_keys = cur_keys if cur_keys is not None else [message_key(m) for m in cur]
    same = 0
    while same < min(len(prev), len(cur)) and prev_keys[same] == cur_keys[same]:
        same += 1
    if same == len(prev):
        return Comparison(appended=tuple(range(same, len(cur))), last_kept=same - 1)
    cur_set = set(cur_keys)
    prev_results, cur_results = tool_results(prev), tool_results(cur)
    # the same object is the same result: a history that shares its blocks between two
    # requests (ctxlab's own) is compared without dumping every result twice
    rewritten_ids = [i for i, v in prev_results.items() if i in cur_results
                     and v is not cur_results[i]
                     and result_key(v) != result_key(cur_results[i])]
    rewritten_set = set(rewritten_ids)
    removed = [i for i, k in enumerate(prev_keys) if k not in cur_set
               and not any(t in cur_results or t in rewritten_set for t in tool_ids(prev[i]))
               and not (i < len(cur) and _same_slot(prev[i], cur[i]))]
    removed_set = set(removed)
    # The new tail: entries after the last one carried over from ``prev``.
    prev_set = set(prev_keys)
    last_kept = max((j for j, k in enumerate(cur_keys) if k in prev_set), default=-1)
    if rewritten_ids:
        last_kept = max(last_kept, max(j for j, m in enumerate(cur)
                                       if set(tool_ids(m)) & rewritten_set))
    if last_kept == -1 and cur and is_summary(cur[0]):
        last_kept = 0  # the summary stands in for the past; what follows it is new
    if summary_asked and removed:
        tail = next((j for j in range(last_kept + 1, len(cur))
                     if cur_keys[j] not in prev_set and is_summary_item(cur[j])), None)
        last_kept = tail if tail is not None else last_kept
    slots = tuple(i for i in range(min(len(prev), len(cur)))
                  if prev_keys[i] != cur_keys[i] and i not in removed_set
                  and _same_slot(prev[i], cur[i])
                  and not set(tool_ids(prev[i])) & rewritten_set)
    return Comparison(appended=tuple(range(last_kept + 1, len(cur))), removed=tuple(removed),
                      rewritten_ids=tuple(rewritten_ids), rewritten_slots=slots,
                      last_kept=last_kept)


def _same_slot(a: Any, b: Any) -> bool:
    """A message rewritten in place: same role, same tool ids, different content."""
    return (isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role")
            and tool_ids(a) == tool_ids(b) and bool(tool_ids(a)))


# -- the diff a reader sees ------------------------------------------------------------------


@dataclass(frozen=True)
class DiffBlock:
    """One entry of a turn diff: ``+`` appended, ``-`` removed, ``~`` changed in place,
    ``^`` inserted among the entries kept (a summary or a marker where the past was)."""

    sign: str
    index: int  # in the list it is from: ``prev`` for ``-``, ``cur`` otherwise
    role: str
    kind: str
    preview: str
    chars: int  # its JSON chars (a changed one: as it is now)
    before_chars: int | None = None  # a changed one's JSON chars before


@dataclass(frozen=True)
class TurnDiff:
    """What one request changed against the one before: the counts and the entries."""

    appended: int
    removed: int
    changed: int
    blocks: tuple[DiffBlock, ...]
    inserted: int = 0  # new entries among those kept, counted apart (the watch's counts
    # say what the tail gained; what a compaction put in the past's place is its stage's)

    @property
    def counts(self) -> str:
        return f"+{self.appended} −{self.removed} ~{self.changed}"


def entry_kind(message: Any) -> str:
    """What an entry mostly is, in a word: its item type (Responses), else the kind of its
    first block that is no text, else ``text``."""
    kind = item_type(message)
    if kind and kind != "message":
        return kind
    if isinstance(message, dict) and message.get("role") == "tool":
        return "tool_result"
    content = message.get("content") if isinstance(message, dict) else None
    kinds = [str(b.get("type")) for b in content if isinstance(b, dict)] \
        if isinstance(content, list) else []
    if isinstance(message, dict) and message.get("tool_calls"):
        kinds.append("tool_call")
    other = [k for k in kinds if k not in ("text", "input_text", "output_text")]
    return other[0] if other else ("summary" if is_summary(message) else "text")


def entry_preview(message: Any) -> str:
    """An entry's text, else the tool calls it makes (a Messages ``tool_use`` has no text):
    the tool and what it was given."""
    text = preview_of(message)
    content = message.get("content") if isinstance(message, dict) else None
    calls = [f"{b.get('name', '')} {json.dumps(b.get('input'), ensure_ascii=False)}"
             for b in content if isinstance(b, dict) and str(b.get("type")).endswith("tool_use")
             ] if isinstance(content, list) else []
    return " ".join([text, *calls]).strip()


def _block(sign: str, index: int, message: Any, before: Any = None) -> DiffBlock:
    return DiffBlock(sign=sign, index=index, role=str(role_of(message) or ""),
                     kind=entry_kind(message), preview=entry_preview(message)[:PREVIEW],
                     chars=json_chars(message),
                     before_chars=json_chars(before) if before is not None else None)


def diff(prev: list[Any], cur: list[Any], *, summary_asked: bool = False) -> TurnDiff:
    """The turn diff of ``cur`` against ``prev``: removed entries first (as they stood in
    ``prev``), then changed ones (a tool result rewritten in place is one, whichever entry
    holds it), then inserted and appended ones, each in list order."""
    prev_keys, cur_keys = [message_key(m) for m in prev], [message_key(m) for m in cur]
    found = compare(prev, cur, prev_keys=prev_keys, cur_keys=cur_keys,
                    summary_asked=summary_asked)
    blocks = [_block("-", i, prev[i]) for i in found.removed]
    before, after = tool_results(prev), tool_results(cur)
    for tool_id in found.rewritten_ids:
        index = next(j for j, m in enumerate(cur) if tool_id in tool_results([m]))
        blocks.append(DiffBlock(sign="~", index=index, role=str(role_of(cur[index]) or ""),
                                kind="tool_result", preview=result_text(after[tool_id])[:PREVIEW],
                                chars=json_chars(after[tool_id]),
                                before_chars=json_chars(before[tool_id])))
    blocks += [_block("~", i, cur[i], prev[i]) for i in found.rewritten_slots]
    known = set(prev_keys)
    holders = {b.index for b in blocks if b.sign == "~"}
    inserted = [j for j in range(found.last_kept + 1)
                if cur_keys[j] not in known and j not in holders]
    blocks += [_block("^", j, cur[j]) for j in inserted]
    blocks += [_block("+", j, cur[j]) for j in found.appended]
    return TurnDiff(appended=len(found.appended), removed=len(found.removed),
                    changed=found.rewritten, blocks=tuple(blocks), inserted=len(inserted))
