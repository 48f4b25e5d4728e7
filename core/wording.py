"""Counts in English sentences: ``1 message``, ``2 messages`` — never ``1 messages``.

The command line's lines and the replay's notices are English only (the workbench's words
live in its locales, whose ``.one`` ids do the same there). ``message(s)`` spared a branch
and read as a form to fill in, so every count-noun goes through :func:`plural`.
"""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is one (``many`` for irregular ones:
    ``plural(2, "summary", "summaries")``); thousands separated."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"
