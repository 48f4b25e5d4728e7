"""The one category breakdown: what a request's characters are spent on, in one vocabulary.

Every source says it the same way — ctxlab's own loop, both sides of a replay, a watched
client — so a learner compares like with like. The *message* categories split the message
list exactly: they add up to ``json_chars(messages)``, the measure the compaction trigger
compares and the Context meter's bar shows.

* ``text`` — conversation text (a string content, a text block, a block of another kind);
* ``system_messages`` — the content of ``role: "system"`` messages in the history (Claude
  Code sends its agent and skill listings that way): instructions, not conversation, though
  they are in the message list;
* ``tool_calls`` — ``tool_use`` blocks, whole;
* ``tool_results`` — what tool results hold (their ``content``);
* ``pointers`` — the stand-ins ctxlab put where a result was: micro's placeholder and the
  ``<persisted-output>`` preview (:mod:`core.compact.pointers`);
* ``summaries`` — ctxlab's summary messages and snip's archive marker (and the API's own
  ``compaction`` block);
* ``thinking`` — thinking blocks; ``images`` — images and documents;
* ``structure`` — the JSON around all of that: keys, quotes, brackets, commas.

The request-level categories are sent with every call but never counted by the trigger:
``system``, ``memory``, ``recalled`` and ``pinned`` (the system prompt by what its sections
are) and ``tools`` (the tool definitions). A source puts in only those it knows.

It lives beside the compaction mechanisms because telling a pointer or a summary from
conversation text means knowing the texts compaction writes; the measure itself
(:mod:`core.measure`) stays free of them, as every stage depends on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from core.compact.pointers import WRAPPER_HEAD, archive_marker_path, pointer_path
from core.compact.summary_facts import is_summary_message
from core.measure import json_chars

PROMPT_CATEGORIES = ("system", "memory", "recalled", "pinned")
SENT_EVERY_CALL = (*PROMPT_CATEGORIES, "tools")
MESSAGE_CATEGORIES = ("text", "system_messages", "tool_calls", "tool_results", "pointers",
                      "summaries", "thinking", "images", "structure")
CATEGORIES = SENT_EVERY_CALL + MESSAGE_CATEGORIES

Sizes = dict[str, int]
# Where a string of each shape is counted.
_SHAPE_CATEGORY = {"text": "text", "summary": "summaries", "marker": "summaries",
                   "pointer": "pointers", "wrapper": "pointers"}


def text_kind(text: Any, message: dict[str, Any] | None = None) -> str:
    """Which engine-made shape a content value has: ``summary``, ``marker`` (snip's),
    ``wrapper`` (a persisted preview), ``pointer`` (micro's placeholder) or ``text``."""
    if message is not None and is_summary_message(message):
        return "summary"
    if not isinstance(text, str):
        return "text"
    if archive_marker_path(text):
        return "marker"
    if pointer_path(text):
        return "wrapper" if text.startswith(WRAPPER_HEAD) else "pointer"
    return "text"


def _result_content(content: Any, sizes: Sizes) -> None:
    """A tool result's content: a pointer or text, or a list whose images count apart (the
    list's own brackets and commas are structure)."""
    if isinstance(content, str):
        kind = text_kind(content)
        sizes["pointers" if kind in ("pointer", "wrapper") else "tool_results"] += \
            json_chars(content)
    elif isinstance(content, list):
        for item in content:
            image = isinstance(item, dict) and item.get("type") in ("image", "document")
            sizes["images" if image else "tool_results"] += json_chars(item)
    elif content is not None:
        sizes["tool_results"] += json_chars(content)


def _block(block: Any, sizes: Sizes) -> None:
    if not isinstance(block, dict):
        return  # counted as structure: the API would refuse it anyway
    kind = str(block.get("type", ""))
    if kind == "text":
        text = block.get("text", "")
        sizes[_SHAPE_CATEGORY[text_kind(text)]] += json_chars(text)
    elif kind.endswith("tool_use"):  # tool_use, server_tool_use, mcp_tool_use
        sizes["tool_calls"] += json_chars(block)
    elif kind.endswith("tool_result"):  # tool_result, web_search_tool_result…
        if "content" in block:
            _result_content(block["content"], sizes)
    elif kind in ("thinking", "redacted_thinking"):
        sizes["thinking"] += json_chars(block)
    elif kind in ("image", "document"):
        sizes["images"] += json_chars(block)
    elif kind == "compaction":  # the API's own summary, sent back as it came
        sizes["summaries"] += json_chars(block)
    else:
        sizes["text"] += json_chars(block)


def message_breakdown(message: Any) -> Sizes:
    """One message's JSON length split by category; the parts add up to it exactly (a
    value that is no message at all, as a hostile body may hold, is all structure)."""
    sizes = dict.fromkeys(MESSAGE_CATEGORIES, 0)
    if not isinstance(message, dict):
        sizes["structure"] = json_chars(message)
        return sizes
    content = message.get("content")
    if message.get("role") == "system":
        sizes["system_messages"] += json_chars(content) if "content" in message else 0
    elif isinstance(content, str):
        sizes[_SHAPE_CATEGORY[text_kind(content, message)]] += json_chars(content)
    elif isinstance(content, list):
        for block in content:
            _block(block, sizes)
    sizes["structure"] = json_chars(message) - sum(sizes.values())
    return sizes


class BreakdownCache:
    """Per-message breakdowns kept by identity, and their running sum.

    A history is the last one plus a message or two, and the engine copies a message it
    changes instead of mutating it, so each message is split once, however many requests it
    is sent in. The sum is kept too: which messages left the list and which joined it is
    found from their identities with set operations (in C), and only those are taken out
    of the sum or added to it, so a long history's totals cost what changed, not its length
    (snip drops messages from the front and micro replaces some in the middle, so the
    list's common prefix with the last one is often short). An identity in both lists is
    the same message: the cache holds every message it counts, so none can be freed and its
    id reused meanwhile.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, Sizes]] = {}
        self._sum = dict.fromkeys(MESSAGE_CATEGORIES, 0)

    def totals(self, messages: Sequence[Any]) -> Sizes:
        """The message list's breakdown: adds up to ``json_chars(messages)`` exactly (the
        list's brackets and commas are structure)."""
        now = dict(zip(map(id, messages), messages, strict=True))
        if len(now) != len(messages):  # a message object listed twice: counted as often
            return self._counted_apart(messages)
        known = self._known
        for gone in known.keys() - now.keys():
            _add(self._sum, known.pop(gone)[1], -1)
        for new in now.keys() - known.keys():
            message = now[new]
            split = message_breakdown(message)
            known[new] = (message, split)
            _add(self._sum, split, 1)
        return _with_structure(self._sum, len(messages))

    def _counted_apart(self, messages: Sequence[Any]) -> Sizes:
        """The totals summed message by message, the running sum left as it was."""
        totals = dict.fromkeys(MESSAGE_CATEGORIES, 0)
        for message in messages:
            hit = self._known.get(id(message))
            _add(totals, hit[1] if hit is not None else message_breakdown(message), 1)
        return _with_structure(totals, len(messages))


def _add(total: Sizes, split: Sizes, sign: int) -> None:
    for key, value in split.items():
        total[key] += sign * value


def _with_structure(messages_sum: Sizes, count: int) -> Sizes:
    """A copy of the messages' summed breakdown with the list's own brackets and ``", "``
    counted as structure."""
    totals = dict(messages_sum)
    totals["structure"] += 2 + 2 * max(count - 1, 0)
    return totals


def section_group(section: dict[str, Any]) -> str:
    """``system``, ``memory``, ``recalled`` or ``pinned`` for one system-prompt section
    (as a ``system_prompt`` event describes it).

    The engine's ``category`` decides; within memory, the records recalled for this request
    are told apart from the rules and catalog, since they change with every request. A
    section without a category (an old log) falls back to its name, as the engine does.
    """
    name = str(section.get("name", "")).lower()
    category = str(section.get("category") or "")
    if not category:
        category = "pinned" if name.startswith("rules:") or name == "worklog" else (
            "memory" if "memory" in name or "recall" in name else "system")
    if category == "memory" and ("relevant" in name or "recall" in name):
        return "recalled"
    return category if category in PROMPT_CATEGORIES else "system"


def prompt_breakdown(sections: Iterable[dict[str, Any]], system_chars: int) -> Sizes:
    """The system prompt's ``system_chars`` by section category, adding up exactly: the
    blank lines that join sections are ctxlab's own layout, so they count as ``system``."""
    sizes = dict.fromkeys(PROMPT_CATEGORIES, 0)
    for section in sections:
        sizes[section_group(section)] += int(section.get("chars", 0))
    others = sizes["memory"] + sizes["recalled"] + sizes["pinned"]
    sizes["system"] = max(system_chars - others, 0)
    return sizes
