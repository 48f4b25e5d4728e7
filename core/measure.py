"""The size measure: ``len(json.dumps(messages, ensure_ascii=False))``, kept incrementally.

The course re-serialises the whole history after every small change, which makes micro and
fit quadratic. With Python's default separators (``", "`` and ``": "``, no indent) a value's
JSON text does not depend on where it sits, so a change can be priced by the length of the
old and new *values* alone. :class:`Measured` keeps one length per message and their sum,
and :func:`json_chars` is the definition everything is checked against.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

Message = dict[str, Any]


def json_chars(value: Any) -> int:
    """The course's measure of any JSON value (a message list, a message, a string)."""
    return len(json.dumps(value, ensure_ascii=False))


def list_chars(item_chars: Iterable[int]) -> int:
    """Length of a JSON array whose items dump to ``item_chars``: ``[a, b, c]``."""
    total = 0
    count = 0
    for n in item_chars:
        total += n
        count += 1
    return 2 + total + 2 * max(count - 1, 0)


class Measured:
    """A message list with its JSON length kept up to date without re-serialising it.

    Stages change history only through :meth:`set_content` (one tool_result's content) and
    :meth:`replace_all` (a new list, e.g. after snip), so ``chars`` is always exact.
    """

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self._sizes = [json_chars(m) for m in messages]
        self._total = list_chars(self._sizes)

    @property
    def chars(self) -> int:
        return self._total

    def __len__(self) -> int:
        return len(self.messages)

    def set_content(self, msg_idx: int, block_idx: int, content: Any) -> int:
        """Replace ``messages[msg_idx].content[block_idx].content``; return the char delta.

        The message dict and its content list are copied, never mutated, so a caller's
        snapshot of the old history stays as it was.
        """
        message = self.messages[msg_idx]
        blocks = list(message["content"])
        block = dict(blocks[block_idx])
        delta = json_chars(content) - json_chars(block.get("content", ""))
        if "content" not in block:
            # A block without content gains a key: `, "content": ...` before the closing brace.
            delta = len(', "content": ') + json_chars(content)
        block["content"] = content
        blocks[block_idx] = block
        self.messages[msg_idx] = {**message, "content": blocks}
        self._sizes[msg_idx] += delta
        self._total += delta
        return delta

    def replace_all(self, messages: list[Message]) -> None:
        """Adopt a new list; messages carried over keep their cached size (by identity)."""
        known = {id(m): size for m, size in zip(self.messages, self._sizes, strict=True)}
        self.messages = messages
        self._sizes = [known.get(id(m)) or json_chars(m) for m in messages]
        self._total = list_chars(self._sizes)

    def chars_from(self, index: int) -> int:
        """The JSON chars of ``messages[index:]`` (separators included, brackets not)."""
        tail = self._sizes[index:]
        return sum(tail) + max(len(tail) - 1, 0) * 2

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._sizes.append(json_chars(message))
        self._total = list_chars(self._sizes)


# -- token estimate ---------------------------------------------------------------------------

CHARS_PER_TOKEN = 4  # how a char count becomes a rough token count (and back)


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def estimate_tokens(text: str) -> int:
    """A rough, CJK-aware token estimate, shown beside the char measure, never instead of it.

    Rule: one token per 4 non-wide characters, plus 1.3 tokens per wide (CJK, full-width)
    character, rounded up. Claude's tokenizer spends about one token per 3.5-4 Latin chars
    of code and prose and 1-1.5 tokens per Chinese character; the estimate aims at the middle.
    """
    wide = sum(1 for ch in text if ord(ch) > 0x2E7F and _is_wide(ch))
    narrow = len(text) - wide
    return -(-(narrow * 10 + wide * 52) // 40)
