"""The size measure: ``len(json.dumps(messages, ensure_ascii=False))``, kept incrementally.

The course re-serialises the whole history after every small change, which makes micro and
fit quadratic. With Python's default separators (``", "`` and ``": "``, no indent) a value's
JSON text does not depend on where it sits, so a change can be priced by the length of the
old and new *values* alone. :class:`Measured` keeps one length per message and their sum,
and :func:`json_chars` is the definition everything is checked against.

For the same reason a large string's JSON length is its length, plus 2 for the quotes, plus
what escaping adds: ``"``, ``\\`` and the short escapes add 1 character each, the other
control characters 5 (a ``\\u`` escape). :func:`str_json_chars` counts those instead of building
the escaped copy, which for a 10 MB tool result is several times faster and exactly equal.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring
from typing import Any

Message = dict[str, Any]

LARGE_STRING = 1 << 16  # below this, building the escaped copy is as fast as counting
_ESCAPED = bytes(range(0x20)) + b'"\\'
_KEEP_ONLY_ESCAPED = bytes(i for i in range(256) if i not in _ESCAPED)
_SHORT_ESCAPES = b'"\\\b\f\n\r\t'  # the escapes of one more character: \" \\ \b \f \n \r \t
_WALKED = (dict, list)
_SLICE = 4 << 20  # bytes counted per C call, so no one call holds the interpreter lock long


_last = threading.local()  # per thread: the last large string encoded, and its bytes


def utf8(text: str, *, remember: bool = False) -> bytes:
    """``text`` as UTF-8 (lone surrogates kept), reusing the bytes of the last large string
    this thread encoded: a fresh result is measured, then hashed and written, and at 50 MB
    a second encoding costs as much as the write. ``remember`` makes these bytes the ones
    reused (measuring a string remembers them for the archive's write that follows)."""
    last = getattr(_last, "pair", None)
    if last is not None and last[0] is text:
        return last[1]
    data = text.encode("utf-8", "surrogatepass")
    if remember:
        _last.pair = (text, data)
    return data


def forget_large() -> None:
    """Drop what this thread remembers of large strings (their bytes, their counts): once
    they are on disk, holding them only costs memory."""
    _last.pair = None
    _last.counted = {}


def str_json_chars(text: str) -> int:
    """``len(json.dumps(text, ensure_ascii=False))`` without building the escaped copy.

    The escapes are counted on the text's UTF-8 bytes (:func:`escape_extra`), which are
    remembered for the archive's write that usually follows. Non-ASCII text too: the
    escaped copy ``encode_basestring`` builds is a new string as large as the text, while
    encoding is one copy the write needs anyway. A string the archive just counted while
    saving it (:func:`note_json_chars`) is not counted again.
    """
    if len(text) < LARGE_STRING:
        return len(encode_basestring(text))
    counted = getattr(_last, "counted", {}).get(id(text))
    if counted is not None and counted[0] is text:
        return counted[1]
    data = utf8(text, remember=True)
    if len(data) <= _SLICE:
        return len(text) + 2 + escape_extra(data)
    # In slices: one C call over 50 MB would hold the interpreter lock for its whole run,
    # and the workbench's event loop could not draw meanwhile (the engine measures in a
    # worker thread); between slices the lock can change hands.
    view = memoryview(data)
    extra = sum(escape_extra(view[start:start + _SLICE].tobytes())
                for start in range(0, len(data), _SLICE))
    return len(text) + 2 + extra


def escape_extra(data: bytes) -> int:
    """How many characters JSON escaping adds to this UTF-8 text: 1 for ``"``, ``\\`` and
    each short escape, 5 for any other control character (a ``\\u`` escape). Bytes of a
    multi-byte character (and of a lone surrogate kept with ``surrogatepass``) are never
    below 0x80, so any slice of the text can be counted.

    The first ``translate`` keeps only the 34 bytes that escaping changes, one C pass; the
    second, over what is left (usually the newlines), drops the short escapes, so the
    long ones are what remains: one call instead of a ``count`` per short escape."""
    escaped = data.translate(None, _KEEP_ONLY_ESCAPED)
    long = len(escaped.translate(None, _SHORT_ESCAPES))
    return len(escaped) + 4 * long


def note_json_chars(text: str, chars: int) -> None:
    """Remember, for this thread, the JSON length of a large string counted elsewhere (the
    archive counts a large result while it writes it, before the history is measured).
    Kept until :func:`forget_large`."""
    counted = getattr(_last, "counted", None)
    if counted is None:
        counted = _last.counted = {}
    counted[id(text)] = (text, chars)


def _holds_large(value: Any) -> bool:
    """Is there a string of ``LARGE_STRING`` or more anywhere in ``value``? (Types and
    lengths only: much cheaper than encoding.)"""
    kind = type(value)
    if kind is str:
        return len(value) >= LARGE_STRING
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return False
    for item in value:
        if type(item) is str:
            if len(item) >= LARGE_STRING:
                return True
        elif type(item) in _WALKED and _holds_large(item):
            return True
    return False


def text_length(value: Any) -> int:
    """The characters of every string in ``value`` (dict keys included): a bound on the
    bytes a save of it writes, up to the UTF-8 width, found by types and lengths alone."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is dict:
        return sum(len(key) if type(key) is str else 0 for key in value) + \
            sum(text_length(item) for item in value.values())
    if kind is list:
        return sum(text_length(item) for item in value)
    return 0


def json_chars(value: Any, memo: dict[int, tuple[str, int]] | None = None) -> int:
    """The course's measure of any JSON value (a message list, a message, a string).

    Dicts and lists are walked so a large string inside them is counted, not copied; the
    result is the length of ``json.dumps(value, ensure_ascii=False)``, character for
    character (a dict with a non-string key is dumped whole: JSON turns its keys into
    strings). ``memo`` collects the large strings counted, by identity.
    """
    kind = type(value)
    if kind in _WALKED and not _holds_large(value):
        return len(json.dumps(value, ensure_ascii=False))  # one C call is cheapest
    if kind is str:
        chars = str_json_chars(value)
        if memo is not None and len(value) >= LARGE_STRING:
            memo[id(value)] = (value, chars)
        return chars
    if kind is list:
        return list_chars(json_chars(item, memo) for item in value)
    if kind is dict:
        if not all(type(key) is str for key in value):
            return len(json.dumps(value, ensure_ascii=False))
        # {"k": v, ...}: braces, ": " after each key, ", " between items
        inner = sum(len(encode_basestring(key)) + 2 + json_chars(item, memo)
                    for key, item in value.items())
        return 2 + inner + 2 * max(len(value) - 1, 0)
    return len(json.dumps(value, ensure_ascii=False))


def list_chars(item_chars: Iterable[int]) -> int:
    """Length of a JSON array whose items dump to ``item_chars``: ``[a, b, c]``."""
    if isinstance(item_chars, list):  # a history's sizes: summed in C, not item by item
        return 2 + sum(item_chars) + 2 * max(len(item_chars) - 1, 0)
    total = 0
    count = 0
    for n in item_chars:
        total += n
        count += 1
    return 2 + total + 2 * max(count - 1, 0)


def missing(found: list[Any]) -> Iterator[int]:
    """The positions of ``None`` in ``found``, each found by a search in C: a long history
    looked up in a cache has only its newest messages missing."""
    index = -1
    while True:
        try:
            index = found.index(None, index + 1)
        except ValueError:
            return
        yield index


class SizeCache:
    """Message sizes kept between ``prepare()`` calls, by identity.

    Most turns compact nothing: the history is the last one plus a message or two, so
    measuring only the new messages makes such a call cost a walk of dict lookups instead of
    a JSON dump of everything. Keyed by ``id`` with every message sized held, so an id is
    never reused for another dict while cached (a live object's id is its own: no identity
    check is needed, and a whole list is looked up in C); this relies on what the pipeline
    already assumes: a message dict is never changed in place once it is in a history
    (stages copy).
    """

    def __init__(self) -> None:
        self._sizes: dict[int, int] = {}
        self._held: list[list[Message]] = []  # every message sized, so its id stays its own

    def size(self, message: Message, memo: dict[int, tuple[str, int]] | None = None) -> int:
        known = self._sizes.get(id(message))
        return known if known is not None else json_chars(message, memo)

    def sizes(self, messages: list[Message],
              memo: dict[int, tuple[str, int]] | None = None) -> list[int]:
        """Each message's size: the cached ones looked up in one pass, the rest measured."""
        found: list[int | None] = list(map(self._sizes.get, map(id, messages)))
        for index in missing(found):
            found[index] = json_chars(messages[index], memo)
        return found  # type: ignore[return-value]  # no None is left

    def light_total(self, messages: list[Message], new_chars: int) -> int | None:
        """The list's size if what is not cached yet is small (no large string, at most
        ``new_chars`` in all; measured now and cached), else None without measuring it."""
        total = 0
        fresh = 0
        sized: list[Message] = []
        self._held.append(sized)  # before any size is stored: an early None keeps them too
        for message in messages:
            known = self._sizes.get(id(message))
            if known is not None:
                total += known
                continue
            if _holds_large(message):
                return None
            size = json_chars(message)
            fresh += size
            if fresh > new_chars:
                return None
            self._sizes[id(message)] = size
            sized.append(message)
            total += size
        return total + 2 + 2 * max(len(messages) - 1, 0)

    def keep(self, *histories: Measured) -> None:
        """Remember exactly these histories' messages (older ones are let go)."""
        self._sizes = {}
        for history in histories:
            self._sizes.update(zip(map(id, history.messages), history.sizes, strict=True))
        self._held = [list(history.messages) for history in histories]


class Measured:
    """A message list with its JSON length kept up to date without re-serialising it.

    Stages change history only through :meth:`set_content` (one tool_result's content) and
    :meth:`replace_all` (a new list, e.g. after snip), so ``chars`` is always exact.
    """

    def __init__(self, messages: list[Message], known: SizeCache | None = None) -> None:
        self.messages = messages
        # large strings counted while measuring, so replacing one does not count it again
        self._memo: dict[int, tuple[str, int]] = {}
        cache = known or SizeCache()
        self._sizes = cache.sizes(messages, self._memo)
        self._total = list_chars(self._sizes)

    @property
    def chars(self) -> int:
        return self._total

    @property
    def sizes(self) -> list[int]:
        return self._sizes

    def __len__(self) -> int:
        return len(self.messages)

    def _chars(self, value: Any) -> int:
        if type(value) is str and len(value) >= LARGE_STRING:
            known = self._memo.get(id(value))
            if known is not None and known[0] is value:
                return known[1]
        return json_chars(value)

    def set_content(self, msg_idx: int, block_idx: int, content: Any) -> int:
        """Replace ``messages[msg_idx].content[block_idx].content``; return the char delta.

        The message dict and its content list are copied, never mutated, so a caller's
        snapshot of the old history stays as it was.
        """
        message = self.messages[msg_idx]
        blocks = list(message["content"])
        block = dict(blocks[block_idx])
        delta = json_chars(content) - self._chars(block.get("content", ""))
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
        old = SizeCache()  # the old list holds its messages while this runs
        old.keep(self)
        self.messages = messages
        self._sizes = old.sizes(messages)
        self._total = list_chars(self._sizes)

    def chars_from(self, index: int) -> int:
        """The JSON chars of ``messages[index:]`` (separators included, brackets not)."""
        tail = self._sizes[index:]
        return sum(tail) + max(len(tail) - 1, 0) * 2

    def append(self, message: Message) -> None:
        """Add a message at the end, priced alone (a ``, `` before it unless it is the first):
        a history followed across thousands of requests is never summed again."""
        size = json_chars(message)
        self._total += size + (2 if self.messages else 0)
        self.messages.append(message)
        self._sizes.append(size)


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
