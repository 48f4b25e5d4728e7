"""The last line of defence before the SDK serialises a request: no lone surrogates.

A Python string can hold a lone surrogate (a file name that is not UTF-8, a ``\\ud800``
escape in a prompt, a session saved by an older version); UTF-8 cannot. The SDK encodes the
request body as strict UTF-8, so one such character anywhere in the history failed the call
with ``UnicodeEncodeError`` — and, the history being resent, every later call of the session.
The tools no longer return such strings, but whatever else lets one through, the request
goes out with U+FFFD in its place (a pair of halves becomes the character they spell).

The walk copies only the containers on the way to a changed string, so a clean request —
the normal case — is returned as the very same object, and the caller's history is never
rewritten. It is iterative: a request nested deeper than Python's recursion limit is
cleaned too (whether the API takes it is the API's business).
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return list(value)
    return []


def valid_unicode(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, strings, scalars) with every string valid.

    Post-order over an explicit stack: each container is rebuilt only if one of its
    children changed, so unchanged parts keep their identity.
    """
    # id(original) -> cleaned. Every original stays referenced by ``value`` during the
    # walk, so no id is reused; a container met again while open (a cycle) stays itself.
    done: dict[int, Any] = {}
    opened: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, expanded = stack.pop()
        key = id(item)
        if key in done or (key in opened and not expanded):
            continue
        if isinstance(item, str):
            done[key] = valid_text(item)
            continue
        children = _children(item)
        if not children or expanded:
            done[key] = _rebuilt(item, done) if children else item
            continue
        opened.add(key)
        stack.append((item, True))
        stack.extend((child, False) for child in children if id(child) not in done)
    return done.get(id(value), value)


def _rebuilt(item: Any, done: dict[int, Any]) -> Any:
    """``item`` with its children replaced by their cleaned versions, or ``item`` itself
    when none changed."""
    def clean(child: Any) -> Any:
        return done.get(id(child), child)

    if isinstance(item, dict):
        pairs = [(clean(k), clean(v)) for k, v in item.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, item.items(), strict=True)):
            return item
        return dict(pairs)
    cleaned = [clean(child) for child in item]
    if all(c is o for c, o in zip(cleaned, item, strict=True)):
        return item
    return type(item)(cleaned)
