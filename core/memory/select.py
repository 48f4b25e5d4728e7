"""Selection: once per user request, pick at most five records worth recalling.

The model sees a numbered catalog (``index: name - description``) and answers with a JSON
array of indices (purpose ``select``). ctxlab differs from the course where it lost
information:

* the query keeps the **newest** 4,000 chars of the last three user messages;
* the keyword fallback runs when the call fails **or** the answer is not a usable JSON
  array, and the ``memory_selected`` event says which method chose;
* CJK text is matched by character bigrams, so 制表符缩进 finds 缩进使用制表符;
* the catalog is cut on a line boundary and only indices the model was shown count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.events import MemorySelected
from core.memory.extract import find_json_array
from core.memory.index import collapse
from core.memory.store import Emit, MemoryStore, Record
from core.messages import message_text
from core.providers.base import ModelCall, Provider

SELECT_MAX_ITEMS = 5
CATALOG_CHAR_LIMIT = 12_000
QUERY_CHAR_LIMIT = 4_000
QUERY_TURNS = 3
SELECT_MAX_TOKENS = 200

_LATIN = re.compile(r"[a-z0-9_]{3,}")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_STOPWORDS = frozenset((
    "the", "and", "for", "with", "this", "that", "from", "are", "was", "were", "you", "your",
    "please", "can", "could", "would", "should", "what", "when", "where", "which", "who",
    "how", "not", "but", "all", "any", "use",
))


def recent_user_text(messages: Sequence[dict[str, Any]], max_turns: int = QUERY_TURNS,
                     limit: int = QUERY_CHAR_LIMIT) -> str:
    """The last ``max_turns`` user texts, oldest first, keeping the newest ``limit`` chars."""
    turns: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        text = message_text(message).strip()
        if text:
            turns.append(text)
        if len(turns) == max_turns:
            break
    query = "\n".join(reversed(turns))
    return query[-limit:] if len(query) > limit else query


def build_catalog(records: Sequence[Record], limit: int = CATALOG_CHAR_LIMIT) -> tuple[str, int]:
    """``index: name - description`` lines cut on a line boundary; returns (text, shown)."""
    lines: list[str] = []
    size = 0
    for i, record in enumerate(records):
        line = f"{i}: {collapse(record.name)} - {collapse(record.description)}"
        if size + len(line) + (1 if lines else 0) > limit:
            break
        size += len(line) + (1 if lines else 0)
        lines.append(line)
    return "\n".join(lines), len(lines)


def select_prompt(query: str, catalog: str) -> str:
    return (
        "Select memory records that are relevant to the current user request. "
        "Return only a JSON array of catalog indices, such as [0, 2]. "
        "Return [] when none are relevant.\n\n"
        f"Current request:\n{query}\n\nMemory catalog:\n{catalog}"
    )


def parse_indices(text: str, shown: int, max_items: int = SELECT_MAX_ITEMS) -> list[int] | None:
    """Indices from the answer, or None when it is not a usable JSON array.

    ``[]`` is usable (nothing relevant). An array naming no valid index — strings,
    booleans, out-of-range numbers — is not, and triggers the keyword fallback.
    """
    values = find_json_array(text)
    if values is None:
        return None
    if not values:
        return []
    picked: list[int] = []
    for value in values:
        if type(value) is int and 0 <= value < shown and value not in picked:
            picked.append(value)
        if len(picked) == max_items:
            break
    return picked or None


def query_terms(query: str) -> set[str]:
    """Latin words of 3+ chars (minus a few stopwords) and CJK character bigrams."""
    low = query.lower()
    terms = {w for w in _LATIN.findall(low) if w not in _STOPWORDS}
    for run in _CJK_RUN.findall(low):
        terms.update(run[i:i + 2] for i in range(len(run) - 1))
    return terms


def keyword_select(records: Sequence[Record], query: str,
                   max_items: int = SELECT_MAX_ITEMS) -> list[Record]:
    """Rank by how many query terms appear in ``name description``; ties by file name."""
    terms = query_terms(query)
    ranked = []
    for record in records:
        haystack = f"{record.name} {record.description}".lower()
        score = sum(term in haystack for term in terms)
        if score:
            ranked.append((-score, record.file, record))
    ranked.sort(key=lambda item: item[:2])
    return [record for _, _, record in ranked[:max_items]]


async def select_memories(store: MemoryStore, messages: Sequence[dict[str, Any]],
                          provider: Provider | None = None, emit: Emit | None = None,
                          *, max_items: int = SELECT_MAX_ITEMS) -> list[Record]:
    """Choose the records to recall for the current request; emits ``memory_selected``.

    With no records or no user text it returns ``[]`` without a model call or an event.
    """
    records = store.records()
    query = recent_user_text(messages)
    if not records or not query or max_items <= 0:
        return []
    chosen: list[Record] | None = None
    if provider is not None:
        catalog, shown = build_catalog(records)
        try:
            prompt = select_prompt(query, catalog)
            reply = await provider.complete(ModelCall(
                purpose="select", messages=[{"role": "user", "content": prompt}],
                max_tokens=SELECT_MAX_TOKENS))
            indices = parse_indices(reply.text, shown, max_items)
        except Exception:
            indices = None
        if indices is not None:
            chosen = [records[i] for i in indices]
    method = "model" if chosen is not None else "keyword"
    if chosen is None:
        chosen = keyword_select(records, query, max_items)
    (emit or store.emit)(MemorySelected(files=tuple(r.file for r in chosen), method=method))
    return chosen
