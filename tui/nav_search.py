"""What the search box asks for, and whether a History item or a Stages row matches it.

One query narrows both panels at once, so a learner looking for "where did the big log go"
sees its tool call in the History and the stage that archived it in the Stages. A query is
one of three kinds: ``tool:Read`` (the calls of one tool, any case), ``stage:micro_compact``
(one stage kind; a part of the name is enough), or plain text, matched without regard to
case against what a row says — and, for a tool call, against its result's content, which
the History does not show until opened. The matching is plain functions on plain strings:
the panels hide the rows that do not match instead of rebuilding them, so a replay with
hundreds of stages stays responsive while the query is typed.
"""

from __future__ import annotations

from dataclasses import dataclass

TOOL, STAGE, TEXT = "tool", "stage", "text"


@dataclass(frozen=True)
class Query:
    """A parsed query: its kind and the lower-cased words to find (empty: match all)."""

    kind: str = TEXT
    needle: str = ""

    @property
    def empty(self) -> bool:
        return not self.needle

    def tool(self, name: str) -> bool:
        """A tool call named ``name`` matches ``tool:`` (its whole name, any case)."""
        return self.kind == TOOL and name.lower() == self.needle

    def stage(self, name: str) -> bool:
        """A stage named ``name`` matches ``stage:`` (a part of its name is enough)."""
        return self.kind == STAGE and self.needle in name.lower()

    def text(self, *texts: str) -> bool:
        """Plain text is found in any of ``texts``, any case."""
        return self.kind == TEXT and any(self.needle in t.lower() for t in texts)


def parse(raw: str) -> Query:
    """``tool:Read`` → a tool query; ``stage:auto`` → a stage query; else plain text."""
    text = raw.strip()
    head, sep, rest = text.partition(":")
    if sep and head.lower() in (TOOL, STAGE) and rest.strip():
        return Query(head.lower(), rest.strip().lower())
    return Query(TEXT, text.lower())


def stage_row_matches(query: Query, stage: str, row_text: str) -> bool:
    """A Stages row: its kind for ``stage:``, its text for plain text, never ``tool:``."""
    return query.empty or query.stage(stage) or query.text(stage, row_text)
