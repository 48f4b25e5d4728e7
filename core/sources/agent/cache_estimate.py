"""Which part of a main call the prompt cache would serve: an estimate for runs without one.

A scripted run (and ``ctxlab compare``) has no API to report ``cache_read_input_tokens``, so
ctxlab estimates it from the breakpoints its own provider sets (:mod:`core.providers.prompt_cache`):
one at the end of the system prompt, one at the end of the history. The cache entries of a
call are the prefixes up to those breakpoints, so the next call reads:

* tools + system up to the breakpoint, if byte-identical to the previous call's (the work
  log, which changes every call, sits after that breakpoint);
* and the whole previous history too, if it is still there, unchanged, at the front, and
  the text between the two breakpoints (the work log) did not change either.

Everything after the last hit is written to the cache again (every token sits before the
final breakpoint, so none is billed as plain input). Tokens are the usual chars/4 estimate;
the API's minimum cacheable length and the cache's lifetime are ignored (a scripted run is
quick). What the estimate shows is the *shape*: a compaction that rewrites the front of the
history, or a system prompt that changes every call, makes every later call a cache write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.measure import CHARS_PER_TOKEN, json_chars


@dataclass(frozen=True)
class CacheSplit:
    read: int
    write: int


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


class PrefixCache:
    """Remembers the previous main call; :meth:`observe` splits the next one."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._head: str | None = None  # tools + system of the previous call
        self._tail = ""  # its system prompt after the breakpoint (the work log)
        self._history: list[str] = []  # its messages, serialised

    def observe(self, system: str, tools: Any, messages: list[dict[str, Any]],
                stable: int | None = None) -> CacheSplit:
        """``stable``: the system prompt's unchanging prefix, where the breakpoint is."""
        cut = stable if stable is not None and 0 < stable < len(system) else len(system)
        head = json.dumps([tools, system[:cut]], ensure_ascii=False, sort_keys=True)
        tail = system[cut:]  # after the breakpoint: part of the history's prefix
        sent = [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in messages]
        total = _tokens(len(head) + len(tail)) + _tokens(json_chars(messages))
        read = 0
        if self.enabled and head == self._head:
            read = _tokens(len(head))
            previous = self._history
            if previous and tail == self._tail and sent[:len(previous)] == previous:
                read += _tokens(len(tail) + sum(len(s) for s in previous) + 2 * len(previous))
        if self.enabled:
            self._head, self._tail, self._history = head, tail, sent
        return CacheSplit(read=min(read, total), write=total - min(read, total) if
                          self.enabled else 0)
